package serve

import (
	"sync"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// guardCodec is the server's protobuf codec: gRPC's own, except for what it does with a message
// it should not decode. gRPC turns a codec's unmarshal error into Internal before any
// interceptor runs, and offers no way to say InvalidArgument; so this codec leaves such a
// message empty, returns no error, and notes why under the message's pointer. The stats handler
// moves the note into the call (stats.InPayload comes right after the decode, in the same
// goroutine, before the handler or the interceptor), where the interceptors answer it.
//
// It also declines to decode a message over the largest limit of its type's methods: a 16 MiB
// message to a 64 KiB method is refused without a decoded copy of it.
type guardCodec struct {
	base encoding.CodecV2
	// limits is the largest message each request type's methods take; set before serving.
	limits  map[protoreflect.FullName]int64
	refused sync.Map // message pointer -> error
}

func newGuardCodec() *guardCodec {
	return &guardCodec{base: encoding.GetCodecV2(grpcproto.Name)}
}

func (c *guardCodec) Name() string { return c.base.Name() }

func (c *guardCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c *guardCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.base.Unmarshal(data, v) // not ours to judge (gRPC's own error)
	}
	size := int64(data.Len())
	if limit, ok := c.limits[m.ProtoReflect().Descriptor().FullName()]; ok && size > limit {
		c.refused.Store(v, tooLarge(size, limit))
		return nil
	}
	if err := c.base.Unmarshal(data, v); err != nil {
		proto.Reset(m) // a handler must never see half a message
		c.refused.Store(v, Invalid("", "the message is not valid protobuf: %v", err))
	}
	return nil
}

// take removes and returns the note on the message v, if any.
func (c *guardCodec) take(v any) error {
	if v == nil {
		return nil
	}
	err, ok := c.refused.LoadAndDelete(v)
	if !ok {
		return nil
	}
	return err.(error)
}
