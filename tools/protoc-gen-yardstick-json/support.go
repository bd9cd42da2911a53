package main

import (
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// support decides which messages get a codec; the answer depends on the descriptors alone, so
// every invocation of the plugin (one per package) agrees on messages that cross packages.
type support struct {
	memo map[protoreflect.FullName]bool
}

func newSupport() *support { return &support{memo: map[protoreflect.FullName]bool{}} }

// message reports whether md gets a codec.
func (s *support) message(md protoreflect.MessageDescriptor) bool {
	if ok, seen := s.memo[md.FullName()]; seen {
		return ok
	}
	s.memo[md.FullName()] = true // a message that holds itself: decided by its other fields
	ok := s.decide(md)
	s.memo[md.FullName()] = ok
	return ok
}

func (s *support) decide(md protoreflect.MessageDescriptor) bool {
	// Only the contract's own messages: the well-known types have protojson forms of their own.
	if md.IsMapEntry() || !strings.HasPrefix(string(md.FullName()), "yardstick.") || md.Fields().Len() > 64 {
		return false
	}
	for i := range md.Fields().Len() {
		if !s.field(md.Fields().Get(i)) {
			return false
		}
	}
	return true
}

func (s *support) field(fd protoreflect.FieldDescriptor) bool {
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return false
	}
	switch {
	case fd.IsMap():
		return fd.MapKey().Kind() == protoreflect.StringKind && scalar(fd.MapValue().Kind())
	case fd.Kind() == protoreflect.MessageKind:
		return s.message(fd.Message())
	}
	return scalar(fd.Kind())
}

func scalar(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BoolKind, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.DoubleKind:
		return true
	}
	return false
}

// allMessages is every message of the file, nested ones included, in declaration order.
func allMessages(ms []*protogen.Message) []*protogen.Message {
	var out []*protogen.Message
	for _, m := range ms {
		out = append(out, m)
		out = append(out, allMessages(m.Messages)...)
	}
	return out
}
