package grpcguard

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// Receive is the gRPC door's step for a call's message (read as bytes, read.go): its size against
// the method's limit, the budget's admission of its decoding at its real size on the call's
// ticket (released once answered, Observe), the decoding, and no unknown fields. The read goes
// back once the message is decoded.
func (g *Guard) Receive(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	c, rt := callFrom(ctx), g.routes.ByMethod[info.FullMethod] // the tap handle let in served methods only
	w := c.msg
	c.msg = wireMessage{} // the handler wrapper no longer frees it: this does
	defer w.free()
	if w.size() > rt.MessageLimit {
		return nil, tooLarge(w.size(), rt.MessageLimit)
	}
	if err := c.ticket.AdmitDecode(ctx, w.size()); err != nil {
		return nil, err
	}
	err := decode(&w, req, true)
	c.read.Done() // the message is decoded: its bytes are gone
	if err != nil {
		return nil, err
	}
	g.step(ctx, "message")
	return next(ctx, req)
}

// receiveStreamed is Receive's check for a message a stream read, without the budget: health and
// reflection are read within their slots, and a batch stream's handler admits its records once
// decoded. Only a record's unknown fields are refused (health and reflection are not ours).
func receiveStreamed(rt *routes.Route, w *wireMessage, m any) error {
	defer w.free()
	if w.size() > rt.MessageLimit {
		return tooLarge(w.size(), rt.MessageLimit)
	}
	return decode(w, m, rt.Records)
}

type vtMessage interface {
	UnmarshalVT([]byte) error
}

// decode decodes w's bytes into msg, which it resets first, and gives the bytes back: by a
// generated decoder when it reads them exactly as protobuf-go would, else by protobuf-go, whose
// answers stand (not valid protobuf; with unknown, the fields the contract does not know). A
// message refused is left empty: a handler must never see half of one.
func decode(w *wireMessage, msg any, unknown bool) error {
	m, ok := msg.(proto.Message)
	if !w.read || !ok {
		w.free()
		return rpcerr.Internal() // a handler the guard did not register, or not a protobuf service
	}
	buf := w.data.MaterializeToBuffer(mem.DefaultBufferPool()) // no copy when gRPC read it in one piece
	w.free()
	defer buf.Free() // decoded strings are copies: the buffer may be reused
	b := buf.ReadOnlyData()
	proto.Reset(m) // a stream reads every message into the same one; the generated decoder merges
	if decodeGenerated(m, b) {
		return nil
	}
	if err := proto.Unmarshal(b, m); err != nil {
		proto.Reset(m)
		return rpcerr.Invalid("", "the message is not valid protobuf: %v", err)
	}
	if !unknown {
		return nil
	}
	var p rpcerr.Problems
	walkUnknown(&p, "", m.ProtoReflect())
	if err := p.Err(); err != nil {
		proto.Reset(m)
		return err
	}
	return nil
}

// decodeGenerated reports whether it decoded b into m, just reset, with the repository's own
// decoder (which refuses what protobuf-go must read as it reads), else vtprotobuf's (only if b is
// well formed); if not, m is reset and protobuf-go decides.
func decodeGenerated(m proto.Message, b []byte) bool {
	var err error
	if pm, ok := m.(jsoncodec.ProtoMessage); ok {
		err = jsoncodec.DecodeProto(pm, b)
	} else if vm, ok := m.(vtMessage); ok && wellFormed(m.ProtoReflect().Descriptor(), b) {
		err = vm.UnmarshalVT(b)
	} else {
		return false
	}
	if err != nil {
		proto.Reset(m) // half decoded
	}
	return err == nil
}

// walkUnknown reports the fields of a gRPC request the contract does not know, with their paths:
// an unknown field is a 400 on the JSON front, and the same mistake (a client built from another
// .proto than the server's) must not pass silently over gRPC.
func walkUnknown(p *rpcerr.Problems, path string, m protoreflect.Message) {
	for raw := m.GetUnknown(); len(raw) > 0; {
		num, typ, n := protowire.ConsumeTag(raw)
		m := -1 // the value's length, once the tag is read
		if n >= 0 {
			m = protowire.ConsumeFieldValue(num, typ, raw[n:])
		}
		if m < 0 {
			p.Add(path, "malformed unknown field data")
			return
		}
		raw = raw[n+m:]
		p.Add(path, "unknown field number %d", num)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		name := fd.JSONName()
		if path != "" {
			name = path + "." + name
		}
		if fd.IsList() {
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				walkUnknown(p, name+"["+strconv.Itoa(i)+"]", list.Get(i).Message())
			}
			return true
		}
		walkUnknown(p, name, v.Message())
		return true
	})
}

func tooLarge(size, limit int64) error {
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionTooLarge, "Request too large.",
		fmt.Sprintf("The message is %d bytes; this method takes at most %d bytes.", size, limit))
}
