package grpcguard

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// A batch stream's record ({string id, oneof request {one message per rpc}}) is no struct shape
// the fast decoder takes (a oneof is an interface field), so protobuf-go would decode every
// record's request: 77 allocations for a 40-item one, where the fast decoder makes a handful.
// The envelope is two fields, which routes.ReadBatch reads from the contract: decodeRecord reads
// them by hand and gives the request's bytes to the fast decoder. It takes only what it reads
// exactly as protobuf-go would; anything else (a field twice, which protobuf-go merges; a field
// it does not know, which protobuf-go keeps for the unknown-field check; a wire type not the
// field's; an id that is not UTF-8; a request the fast decoder declines) returns false, and the
// whole record goes to protobuf-go.

// DecodeRecords has the codec read the records of the batch rpc of shape sh by decodeRecord (the
// frame calls it once it has read the shape, before serving).
func (g *Guard) DecodeRecords(sh *routes.BatchShape) {
	g.codec.batchRecords[sh.Rec.Descriptor().FullName()] = sh
}

// decodeRecord decodes b into m, a record of shape sh, when it can do so exactly as
// proto.Unmarshal would; false leaves m to protobuf-go.
func (c *codec) decodeRecord(sh *routes.BatchShape, b []byte, m proto.Message) bool {
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
		switch f := sh.Request.Fields().ByNumber(num); {
		case num == sh.RecID.Number() && !idSeen && utf8.Valid(v):
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
		r.Set(sh.RecID, protoreflect.ValueOfString(string(id)))
	}
	return true
}
