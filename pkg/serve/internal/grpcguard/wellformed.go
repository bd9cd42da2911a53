package grpcguard

import (
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// vtprotobuf's generated decoder (UnmarshalVT, for the messages the repository's own generated
// decoder does not take: those with a oneof or an Any) reads a message as protobuf-go does only
// when it is what an encoder writes for its type: it refuses a known field of another wire type
// (protobuf-go keeps it as an unknown field, which the guard names), keeps unknown fields out of
// protoreflect's sight, and does not check UTF-8. wellFormed tells the cases apart in one pass
// with no allocation, from a table built once per message type: a message it passes has only
// known fields, each of its wire type (a repeated number also packed), UTF-8 strings, nesting at
// most jsoncodec.MaxProtoDepth (the repository's own decoder makes the same checks as it reads).
// It is stricter where being exact would cost code (a closed enum, a group, a field number past
// maxShapedNumber: none in the contract); what it does not pass goes to protobuf-go, which answers
// as it always did.

// maxShapedNumber is the largest field number a shape indexes; a type with a larger one is never
// well formed (its messages go to protobuf-go).
const maxShapedNumber = 1 << 12

// shape is what wellFormed knows of a message type: its fields by number.
type shape struct {
	fields []fieldShape
	opaque bool // the type has a field wellFormed does not judge: its messages are never well formed
}

// fieldShape is one field: the wire type it takes, and what its value must hold.
type fieldShape struct {
	known  bool
	wire   protowire.Type
	packed bool   // a repeated number: packed (bytes) as well as one by one
	utf8   bool   // a string: valid UTF-8
	sub    *shape // a message's (or a map entry's) own shape
}

// shapes caches each message type's shape, by its descriptor.
var shapes sync.Map // protoreflect.MessageDescriptor -> *shape

// wellFormed reports whether b is a message of type md that the generated decoders read exactly as
// protobuf-go does, with no unknown field (above).
func wellFormed(md protoreflect.MessageDescriptor, b []byte) bool {
	s, ok := shapes.Load(md)
	if !ok {
		s, _ = shapes.LoadOrStore(md, shapeOf(md, map[protoreflect.FullName]*shape{}))
	}
	return s.(*shape).wellFormed(b, 0)
}

func (s *shape) wellFormed(b []byte, depth int) bool {
	if s.opaque || depth > jsoncodec.MaxProtoDepth {
		return false
	}
	for len(b) > 0 {
		tag, n := protowire.ConsumeVarint(b)
		if n < 0 || tag>>3 >= uint64(len(s.fields)) || !s.fields[tag>>3].known {
			return false // field 0, or one the type does not know
		}
		f, typ := &s.fields[tag>>3], protowire.Type(tag&7)
		if typ != f.wire && (typ != protowire.BytesType || !f.packed) {
			return false // protobuf-go would keep it as an unknown field
		}
		b = b[n:]
		if typ == protowire.BytesType {
			n = f.bytes(b, depth)
		} else {
			n = protowire.ConsumeFieldValue(0, typ, b) // a number
		}
		if n < 0 || n > len(b) {
			return false
		}
		b = b[n:]
	}
	return true
}

// bytes checks the length-delimited value of f at the start of b (a string, a message, a packed
// list of numbers) and returns its length (< 0: not well formed).
func (f *fieldShape) bytes(b []byte, depth int) int {
	size, n := protowire.ConsumeVarint(b)
	if n < 0 || size > uint64(len(b)-n) {
		return -1
	}
	v := b[n : n+int(size)]
	switch {
	case f.wire == protowire.Fixed64Type && len(v)%8 != 0, f.wire == protowire.Fixed32Type && len(v)%4 != 0:
		return -1 // packed numbers of a fixed size: a whole number of them
	case f.wire == protowire.VarintType: // packed varints: each whole
		for len(v) > 0 {
			_, m := protowire.ConsumeVarint(v)
			if m < 0 {
				return -1
			}
			v = v[m:]
		}
	case f.utf8 && !utf8.Valid(v):
		return -1
	case f.sub != nil && !f.sub.wellFormed(v, depth+1):
		return -1
	}
	return n + int(size)
}

// shapeOf builds md's shape; building holds the shapes being built, for types that hold
// themselves.
func shapeOf(md protoreflect.MessageDescriptor, building map[protoreflect.FullName]*shape) *shape {
	if s, ok := building[md.FullName()]; ok {
		return s
	}
	s := &shape{}
	building[md.FullName()] = s
	fields := md.Fields()
	largest := 0
	for i := range fields.Len() {
		largest = max(largest, int(fields.Get(i).Number()))
	}
	if largest > maxShapedNumber || md.ExtensionRanges().Len() > 0 {
		s.opaque = true
		return s
	}
	s.fields = make([]fieldShape, largest+1)
	for i := range fields.Len() {
		fd := fields.Get(i)
		f, ok := fieldShapeOf(fd, building)
		if !ok {
			s.opaque = true
			return s
		}
		s.fields[fd.Number()] = f
	}
	return s
}

// fieldShapeOf is fd's shape; false for a field wellFormed does not judge.
func fieldShapeOf(fd protoreflect.FieldDescriptor, building map[protoreflect.FullName]*shape) (fieldShape, bool) {
	f := fieldShape{known: true}
	switch fd.Kind() {
	case protoreflect.BoolKind, protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Uint32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		f.wire = protowire.VarintType
	case protoreflect.EnumKind:
		if fd.Enum().IsClosed() {
			return f, false // protobuf-go keeps a value the enum does not list as an unknown field
		}
		f.wire = protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		f.wire = protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		f.wire = protowire.Fixed64Type
	case protoreflect.StringKind:
		// Every string, though protobuf-go checks only those its syntax asks it to: stricter
		// only sends a proto2 string that is not UTF-8 to protobuf-go.
		f.wire, f.utf8 = protowire.BytesType, true
	case protoreflect.BytesKind:
		f.wire = protowire.BytesType
	case protoreflect.MessageKind:
		f.wire, f.sub = protowire.BytesType, shapeOf(fd.Message(), building)
	default:
		return f, false // groups
	}
	f.packed = fd.IsList() && f.wire != protowire.BytesType
	return f, true
}
