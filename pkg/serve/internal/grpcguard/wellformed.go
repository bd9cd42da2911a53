package grpcguard

import (
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// vtprotobuf's generated decoder and protobuf-go read a message the same way only when it is
// what an encoder writes for its type: the generated decoder refuses a known field of another wire
// type (protobuf-go keeps it as an unknown field, which the guard then names), keeps unknown
// fields where the guard's check would have to look for them with protoreflect, and does not check
// that strings are UTF-8 (protobuf-go refuses them). wellFormed tells the two cases apart in one
// pass over the bytes, with no allocation, from a table built once per message type from its
// descriptor: a message it passes has only fields its type knows, each of its wire type (a
// repeated number also packed), every string UTF-8, nested at most maxWellFormedDepth deep. It is
// stricter than it needs to be (a closed enum, a group, a field number past maxShapedNumber: none
// in the contract) where being exact would cost code: a message it does not pass is decoded by
// protobuf-go, which gives every answer it gave before the generated decoders existed.

// maxWellFormedDepth bounds the nesting wellFormed follows (the contract's messages nest 3 deep;
// protobuf-go's own limit is 10,000).
const maxWellFormedDepth = 100

// maxShapedNumber is the largest field number a shape indexes; a type with a larger one is never
// well formed (its messages go to protobuf-go).
const maxShapedNumber = 1 << 12

// shape is what wellFormed knows of a message type: its fields by number (nil: none past the
// end), or none at all when opaque.
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

// wellFormed reports whether b is a message of type md that the generated decoder reads exactly as
// protobuf-go does, with no unknown field (above).
func wellFormed(md protoreflect.MessageDescriptor, b []byte) bool {
	s, ok := shapes.Load(md)
	if !ok {
		s, _ = shapes.LoadOrStore(md, shapeOf(md, map[protoreflect.FullName]*shape{}))
	}
	return s.(*shape).wellFormed(b, 0)
}

func (s *shape) wellFormed(b []byte, depth int) bool {
	if s.opaque || depth > maxWellFormedDepth {
		return false
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || int(num) >= len(s.fields) || !s.fields[num].known {
			return false
		}
		f := &s.fields[num]
		b = b[n:]
		switch {
		case typ == f.wire:
			n = f.value(b, typ, depth)
		case f.packed && typ == protowire.BytesType:
			n = packed(b, f.wire)
		default:
			return false // protobuf-go would keep it as an unknown field
		}
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// value checks the value of f at the start of b, of wire type typ, and returns its length (< 0:
// not well formed).
func (f *fieldShape) value(b []byte, typ protowire.Type, depth int) int {
	if typ != protowire.BytesType {
		return protowire.ConsumeFieldValue(0, typ, b) // numbers: any value is one
	}
	v, n := protowire.ConsumeBytes(b)
	switch {
	case n < 0:
		return n
	case f.utf8 && !utf8.Valid(v):
		return -1
	case f.sub != nil && !f.sub.wellFormed(v, depth+1):
		return -1
	}
	return n
}

// packed checks a packed list of numbers of wire type wire at the start of b and returns its
// length.
func packed(b []byte, wire protowire.Type) int {
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return n
	}
	for len(v) > 0 {
		m := protowire.ConsumeFieldValue(0, wire, v)
		if m < 0 {
			return m
		}
		v = v[m:]
	}
	return n
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
