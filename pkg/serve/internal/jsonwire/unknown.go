package jsonwire

import (
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// HasUnknown reports whether m, or a message inside it, holds fields its type does not know (kept
// by protobuf as unknown bytes). For the contract's messages it reads the generated structs
// directly (no protoreflect values, no allocation): the gRPC front asks it of every request.
func (c *Codec) HasUnknown(m proto.Message) bool {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if p.fast && reflect.TypeOf(m) == p.st.PtrType {
		return hasUnknownFast(p, layout.Addr(m))
	}
	return hasUnknownReflect(m.ProtoReflect())
}

func hasUnknownFast(p *plan, base layout.Ptr) bool {
	if len(*layout.Field[[]byte](base, p.st.UnknownOffset)) > 0 {
		return true
	}
	for _, f := range p.fields {
		switch f.kind {
		case layout.Message:
			if sub := *layout.Field[layout.Ptr](base, f.offset); !sub.IsNil() && hasUnknownFast(f.sub, sub) {
				return true
			}
		case layout.Messages:
			for _, sub := range *layout.Field[[]layout.Ptr](base, f.offset) {
				if !sub.IsNil() && hasUnknownFast(f.sub, sub) {
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
