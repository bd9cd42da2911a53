package grpcguard

import (
	"context"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// checkReceived reports what is wrong with msg, the message just read: not valid protobuf, or
// over its method's limit (from the codec's record of its size). The interceptors call it before a
// handler sees the message. It returns the codec's record; without one, the message is smaller than
// anything the budget counts on its method (size 0 says so) and holds no unknown field.
func (g *Guard) checkReceived(method string, msg any) (received, error) {
	r, ok := g.codec.take(msg)
	if !ok {
		return received{}, nil
	}
	if r.refused != nil {
		return r, r.refused
	}
	if rt := g.routes.ByMethod[method]; rt != nil && r.size > rt.MessageLimit {
		r.free()
		return r, tooLarge(r.size, rt.MessageLimit)
	}
	return r, nil
}

// Receive is the chain's step for a direct call's message: its size against the method's limit,
// the budget's admission of its decoding, the decoding itself (a large message was kept as bytes
// until now), and no unknown fields. The read was admitted before gRPC read it (read.go); now the
// decoding is, at its real size. release gives the admission back once the call is answered.
func (g *Guard) Receive(ctx context.Context, method string, req any) (release func(), err error) {
	got, err := g.checkReceived(method, req) // malformed or over the method's limit
	if err != nil {
		return nil, err
	}
	rt := g.routes.ByMethod[method]
	adm, err := g.budget.AdmitDecode(ctx, authz.ClientID(ctx), rt != nil && rt.Group, got.size) // a group costs per student
	if err != nil {
		got.free()
		return nil, err
	}
	err = g.decode(&got, req, true)
	if call := callFrom(ctx); call != nil {
		call.read.Done() // the message is decoded: its bytes are gone
	}
	if err != nil {
		adm.Release()
		return nil, err
	}
	return adm.Release, nil
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
