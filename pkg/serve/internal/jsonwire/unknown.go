package jsonwire

import (
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// HasUnknown reports whether m, or a message inside it, holds fields its type does not know (kept
// by protobuf as unknown bytes). For the contract's messages it reads the generated structs
// directly (no protoreflect values, no allocation): the gRPC front asks it of every request.
func (c *Codec) HasUnknown(m proto.Message) bool {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if p.fast && reflect.TypeOf(m) == p.ptrType {
		return hasUnknownFast(p, reflect.ValueOf(m).UnsafePointer())
	}
	return hasUnknownReflect(m.ProtoReflect())
}

func hasUnknownFast(p *plan, base unsafe.Pointer) bool {
	if len(*(*[]byte)(unsafe.Add(base, p.unknownOffset))) > 0 {
		return true
	}
	for _, f := range p.fields {
		ptr := unsafe.Add(base, f.offset)
		switch f.goKind {
		case goMessage:
			if sub := *(*unsafe.Pointer)(ptr); sub != nil && hasUnknownFast(f.sub, sub) {
				return true
			}
		case goMessages:
			for _, sub := range *(*[]unsafe.Pointer)(ptr) {
				if sub != nil && hasUnknownFast(f.sub, sub) {
					return true
				}
			}
		}
	}
	return false
}

func hasUnknownReflect(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.IsMap() || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			list := m.Get(fd).List()
			for j := 0; j < list.Len(); j++ {
				if hasUnknownReflect(list.Get(j).Message()) {
					return true
				}
			}
		} else if hasUnknownReflect(m.Get(fd).Message()) {
			return true
		}
	}
	return false
}
