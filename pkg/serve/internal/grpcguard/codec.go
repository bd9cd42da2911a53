package grpcguard

import (
	"context"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// codec is the server's protobuf codec: gRPC's own, except for what it does with a message
// it should not decode. gRPC turns a codec's unmarshal error into Internal before any
// interceptor runs, and offers no way to say InvalidArgument; so this codec leaves such a
// message empty, returns no error, and records why under the message's pointer. The interceptors
// take the record (checkReceived) before a handler sees the message: gRPC hands the message it
// decoded straight to them.
//
// It also declines to decode a message over the largest limit of its type's methods: a 16 MiB
// message to a 64 KiB method is refused without a decoded copy of it. The interceptors need a
// message's size only from some point on (recordFrom: over the smallest limit of its type's
// methods, to hold it to its method's own; from the size the memory budget starts counting), and
// need to look for unknown fields only in a message protobuf-go decoded (the fast decoders of the
// generated structs refuse any). So the common call — a small message of a known type that the
// fast decoders decoded — leaves no record at all, and no record means exactly that.
//
// Records are keyed by weak pointers and dropped when their message is collected: gRPC may decode
// a message that no interceptor ever sees (a unary call that sends a second message is refused
// after both are decoded), and such a record must not outlive it. While no record is waiting, take
// looks nothing up.
type codec struct {
	encoding.CodecV2 // gRPC's own: its name, Marshal, and Unmarshal for what is not a proto.Message
	// wire decodes the contract's messages through their generated structs (jsonwire) when it can (a 40-item
	// request: 8 allocations against protobuf-go's 94); proto.Unmarshal decodes the rest.
	wire *jsonwire.Codec
	// limits are the largest and smallest message each request type's methods take; set before
	// serving.
	limits map[protoreflect.FullName]typeLimits
	// batchRecords are the batch streams' record types, whose requests the fast decoder takes
	// through decodeRecord (records.go); set before serving.
	batchRecords map[protoreflect.FullName]*routes.BatchShape
	records      sync.Map     // weak.Pointer[byte] of the message -> received
	waiting      atomic.Int64 // records stored and neither taken nor collected
}

// typeLimits are what the codec knows of a request type's methods: the largest and smallest
// message they take, and the size from which the interceptors need to know a message's size.
type typeLimits struct{ largest, smallest, recordFrom int64 }

// received is the codec's record on a message: its size, why it was not decoded (nil if it was), and
// whether protobuf-go decoded it (it may then hold unknown fields). A message the memory budget
// counts (from recordFrom on) is not decoded by the codec at all: raw holds its bytes, and the
// interceptor decodes them (decodeRaw) once the budget has admitted what decoding costs, so no
// decode allocates memory the budget has not granted.
type received struct {
	size    int64
	refused error
	general bool
	raw     mem.Buffer
	cleanup runtime.Cleanup // drops the record if its message is collected first
}

func newCodec(wire *jsonwire.Codec) *codec {
	return &codec{CodecV2: encoding.GetCodecV2(grpcproto.Name), wire: wire, batchRecords: map[protoreflect.FullName]*routes.BatchShape{}}
}

func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.CodecV2.Unmarshal(data, v) // not ours to judge (gRPC's own error)
	}
	size := int64(data.Len())
	lim, known := c.limits[m.ProtoReflect().Descriptor().FullName()]
	if known && size > lim.largest {
		c.record(v, received{size: size, refused: tooLarge(size, lim.largest)})
		return nil
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	if known && size >= lim.recordFrom {
		c.record(v, received{size: size, raw: buf}) // decoded by the interceptor (decodeRaw)
		return nil
	}
	r := received{size: size}
	c.decodeInto(&r, buf, m)
	if !known || r.general || r.refused != nil {
		c.record(v, r)
	}
	return nil
}

// decodeInto decodes buf into m through the fast decoders when they take it, else with protobuf-go as
// gRPC's codec does (general), and gives buf back. A message that is not valid protobuf is left
// empty and refused.
func (c *codec) decodeInto(r *received, buf mem.Buffer, m proto.Message) {
	defer buf.Free()
	if c.wire.TryUnmarshalProtobuf(buf.ReadOnlyData(), m) { // strings are copied: buf may be reused
		return
	}
	if sh := c.batchRecords[m.ProtoReflect().Descriptor().FullName()]; sh != nil && c.decodeRecord(sh, buf.ReadOnlyData(), m) {
		return
	}
	r.general = true
	if err := proto.Unmarshal(buf.ReadOnlyData(), m); err != nil {
		proto.Reset(m) // a handler must never see half a message
		r.refused = rpcerr.Invalid("", "the message is not valid protobuf: %v", err)
	}
}

// free gives back the bytes of a message that will not be decoded.
func (r *received) free() {
	if r.raw != nil {
		r.raw.Free()
		r.raw = nil
	}
}

// decodeRaw decodes a message the codec kept as bytes (r.raw) into msg, once; r then says how it
// went (refused, general).
func (c *codec) decodeRaw(r *received, msg any) {
	if r.raw == nil {
		return
	}
	buf := r.raw
	r.raw = nil
	c.decodeInto(r, buf, msg.(proto.Message)) // Unmarshal keeps the bytes of a proto.Message only
}

// record stores r for the message v until take, or until v is collected.
func (c *codec) record(v any, r received) {
	p, ok := pointerOf(v)
	if !ok {
		return
	}
	key := weak.Make(p)
	if old, ok := c.records.Load(key); ok {
		r.cleanup = old.(received).cleanup // the earlier record's cleanup serves this one
		c.records.Store(key, r)
		return
	}
	c.waiting.Add(1)
	r.cleanup = runtime.AddCleanup(p, func(key weak.Pointer[byte]) {
		if _, ok := c.records.LoadAndDelete(key); ok {
			c.waiting.Add(-1)
		}
	}, key)
	c.records.Store(key, r)
}

// take removes and returns the record on the message v; ok is false when there is none.
func (c *codec) take(v any) (r received, ok bool) {
	if c.waiting.Load() == 0 {
		return r, false
	}
	p, ok := pointerOf(v)
	if !ok {
		return r, false
	}
	n, ok := c.records.LoadAndDelete(weak.Make(p))
	if !ok {
		return r, false
	}
	c.waiting.Add(-1)
	r = n.(received)
	// A stream reads every message into the same one: a cleanup left on it for each would stay
	// with it for the stream's life (157 MiB over a 1,000,000-student group stream).
	r.cleanup.Stop()
	r.cleanup = runtime.Cleanup{}
	return r, true
}

// pointerOf is the start of the object the message pointer v points to.
func pointerOf(v any) (*byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, false
	}
	return (*byte)(rv.UnsafePointer()), true
}

// checkReceived reports what is wrong with msg, the message just read for a call of rt: not valid
// protobuf, or over rt's limit (from the codec's record of its size). The interceptors call it
// before a handler sees the message. It returns the codec's record; without one (size 0), the
// message is smaller than anything the budget counts on its method and holds no unknown field.
func (g *Guard) checkReceived(rt *routes.Route, msg any) (received, error) {
	r, _ := g.codec.take(msg)
	if r.refused != nil {
		return r, r.refused
	}
	if r.size > rt.MessageLimit {
		r.free()
		return r, tooLarge(r.size, rt.MessageLimit)
	}
	return r, nil
}

// Receive is the gRPC door's step for a call's message: its size against the method's limit, the
// budget's admission of its decoding, the decoding itself (a large message was kept as bytes until
// now), and no unknown fields. The read was admitted before gRPC read it (read.go); now the
// decoding is, at its real size, until the call is answered.
func (g *Guard) Receive(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	rt := g.routes.ByMethod[info.FullMethod] // the tap handle let in served methods only
	got, err := g.checkReceived(rt, req)
	if err != nil {
		return nil, err
	}
	adm, err := g.budget.AdmitDecode(ctx, authz.ClientID(ctx), rt.Group, got.size) // a group costs per student
	if err != nil {
		got.free()
		return nil, err
	}
	defer adm.Release()
	err = g.decode(&got, req, true)
	callFrom(ctx).read.Done() // the message is decoded: its bytes are gone
	if err != nil {
		return nil, err
	}
	return next(ctx, req)
}

// decode finishes a received message: decodes it if the codec kept it as bytes, and reports why
// it was refused, or, with unknown, the fields the contract does not know. The fast decoders
// refuse unknown fields: only a message protobuf-go decoded (general) may hold some.
func (g *Guard) decode(r *received, msg any, unknown bool) error {
	if g.codec.decodeRaw(r, msg); r.refused != nil {
		return r.refused
	}
	if m, ok := msg.(proto.Message); ok && unknown && r.general && g.codec.wire.HasUnknown(m) {
		var p rpcerr.Problems
		walkUnknown(&p, "", m.ProtoReflect())
		return p.Err()
	}
	return nil
}

// walkUnknown reports the fields of a gRPC request that the contract does not know (protobuf
// keeps them aside as unknown bytes), with their element paths: an unknown field is a 400 on the
// JSON front, and the same mistake must not pass silently over gRPC (a client built from a newer
// or older .proto than the server's). Paths are built only when something is found.
func walkUnknown(p *rpcerr.Problems, path string, m protoreflect.Message) {
	for raw := m.GetUnknown(); len(raw) > 0; {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			p.Add(path, "malformed unknown field data")
			return
		}
		raw = raw[n:]
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			p.Add(path, "malformed unknown field data")
			return
		}
		raw = raw[m:]
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
