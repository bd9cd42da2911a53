package grpcguard

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A batch stream's record ({string id, oneof request {one message per rpc}}) is no struct shape
// the fast decoder takes (a oneof is an interface field), so protobuf-go would decode every
// record's request: 77 allocations for a 40-item one, where the fast decoder makes a handful.
// The envelope is two fields: decodeRecord reads it by hand and gives the request's bytes to the
// fast decoder. It takes only what it reads exactly as protobuf-go would; anything else (a field
// twice, which protobuf-go merges; a field it does not know, which protobuf-go keeps for the
// unknown-field check; a wire type not the field's; an id that is not UTF-8; a request the fast
// decoder declines) returns false, and the whole record goes to protobuf-go.

// recordEnvelope is a record type's envelope: its id field and its request fields by number.
type recordEnvelope struct {
	id       protoreflect.FieldDescriptor
	requests map[protowire.Number]protoreflect.FieldDescriptor
}

// envelopeOf is md's envelope when md is a record ({string id, oneof request of messages}).
func envelopeOf(md protoreflect.MessageDescriptor) (*recordEnvelope, bool) {
	id, req := md.Fields().ByName("id"), md.Oneofs().ByName("request")
	if id == nil || id.Kind() != protoreflect.StringKind || id.Cardinality() == protoreflect.Repeated || id.ContainingOneof() != nil || req == nil {
		return nil, false
	}
	if md.Fields().Len() != 1+req.Fields().Len() {
		return nil, false // a field the envelope does not read
	}
	e := &recordEnvelope{id: id, requests: map[protowire.Number]protoreflect.FieldDescriptor{}}
	for i := range req.Fields().Len() {
		f := req.Fields().Get(i)
		if f.Message() == nil {
			return nil, false
		}
		e.requests[f.Number()] = f
	}
	return e, true
}

// decodeRecord decodes b into m, a record of envelope e, when it can do so exactly as
// proto.Unmarshal would; false leaves m to protobuf-go.
func (c *codec) decodeRecord(e *recordEnvelope, b []byte, m proto.Message) bool {
	var id []byte
	var idSeen bool
	var req protoreflect.FieldDescriptor
	var reqBytes []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch f := e.requests[num]; {
		case num == e.id.Number() && !idSeen && utf8.Valid(v):
			id, idSeen = v, true
		case f != nil && req == nil:
			req, reqBytes = f, v
		default:
			return false
		}
	}
	r := m.ProtoReflect()
	proto.Reset(m)
	if req != nil {
		sub := r.NewField(req).Message()
		if !c.wire.TryUnmarshalProtobuf(reqBytes, sub.Interface()) {
			return false
		}
		r.Set(req, protoreflect.ValueOfMessage(sub))
	}
	if idSeen {
		r.Set(e.id, protoreflect.ValueOfString(string(id)))
	}
	return true
}
