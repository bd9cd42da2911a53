package layout

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// Kind is how a field is held in its generated Go struct: the Go type T to use with Field.
type Kind uint8

const (
	None       Kind = iota // not one of the kinds below: the message is refused
	String                 // string
	StringPtr              // *string (proto3 optional)
	Int32                  // int32
	Int32Ptr               // *int32
	Float64                // float64
	Float64Ptr             // *float64
	Bool                   // bool
	BoolPtr                // *bool
	Message                // *Msg, used as Ptr
	Messages               // []*Msg, used as []Ptr
	Strings                // []string
	Int32s                 // []int32
	Float64s               // []float64
)

// Struct is the verified layout of one message type's generated struct.
type Struct struct {
	Type          reflect.Type // the struct
	PtrType       reflect.Type // *Type: the proto.Message
	ChunkType     reflect.Type // []Type: a run of elements (MakeSlice)
	ListType      reflect.Type // []*Type: a list field of this message type (SetList)
	UnknownOffset uintptr      // of the struct's unknown fields ([]byte)
	Fields        []Slot       // the descriptor's fields, in declaration order
}

// Slot is where one field lies and how it is held.
type Slot struct {
	Offset uintptr
	Kind   Kind
}

// protobuf-go's internal fields of an open struct, by name.
var internal = map[string]reflect.Type{
	"state":         reflect.TypeOf(protoimpl.MessageState{}),
	"sizeCache":     reflect.TypeOf(protoimpl.SizeCache(0)),
	"unknownFields": reflect.TypeOf(protoimpl.UnknownFields(nil)),
}

// Of returns the layout of md's registered generated struct, or nil when there is none or its shape
// is not exactly the one this package reads and writes (see the package comment).
func Of(md protoreflect.MessageDescriptor) *Struct {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil || mt.Descriptor() != md {
		return nil
	}
	pt := reflect.TypeOf(mt.Zero().Interface())
	if pt.Kind() != reflect.Pointer || pt.Elem().Kind() != reflect.Struct {
		return nil
	}
	t := pt.Elem()
	s := &Struct{Type: t, PtrType: pt, ChunkType: reflect.SliceOf(t), ListType: reflect.SliceOf(pt)}
	byNumber, ok := fieldsByNumber(t, s)
	fields := md.Fields()
	if !ok || len(byNumber) != fields.Len() {
		return nil
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		sf, ok := byNumber[fd.Number()]
		if _, name, _ := tag(sf); !ok || name != string(fd.Name()) {
			return nil
		}
		k := kindOf(fd, sf.Type)
		if k == None {
			return nil
		}
		s.Fields = append(s.Fields, Slot{Offset: sf.Offset, Kind: k})
	}
	return s
}

// fieldsByNumber maps the struct's message fields by field number, after checking that everything
// else in it is one of protobuf-go's internal fields and that the state is the open API's. It
// records the unknown fields' offset in s.
func fieldsByNumber(t reflect.Type, s *Struct) (map[protoreflect.FieldNumber]reflect.StructField, bool) {
	byNumber := map[protoreflect.FieldNumber]reflect.StructField{}
	seen := 0
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if want, ok := internal[sf.Name]; ok {
			if sf.Type != want || (sf.Name == "state" && sf.Tag.Get("protogen") != "open.v1") {
				return nil, false
			}
			if sf.Name == "unknownFields" {
				s.UnknownOffset = sf.Offset
			}
			seen++
			continue
		}
		// A message field is exported and tagged; anything else (the Opaque API's hidden fields
		// and presence bitmap, a oneof's interface, a lazy or weak field) is a shape not verified.
		n, _, ok := tag(sf)
		if !sf.IsExported() || !ok || sf.Tag.Get("protobuf_oneof") != "" {
			return nil, false
		}
		if _, dup := byNumber[n]; dup {
			return nil, false
		}
		byNumber[n] = sf
	}
	return byNumber, seen == len(internal)
}

// tag is the field number and name in sf's protobuf tag ("bytes,1,opt,name=link_id,...").
func tag(sf reflect.StructField) (n protoreflect.FieldNumber, name string, ok bool) {
	parts := strings.Split(sf.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return 0, "", false
	}
	for _, part := range parts[2:] {
		if s, found := strings.CutPrefix(part, "name="); found {
			name = s
			break
		}
	}
	num, err := strconv.ParseInt(parts[1], 10, 32)
	return protoreflect.FieldNumber(num), name, err == nil && num > 0
}

// kindOf is how fd is held in a field of Go type t, or None. A scalar with presence (proto3
// optional) must be a pointer and one without a plain value: a value for a field with presence is
// the Opaque API's, whose presence lives in a bitmap these writes would not set.
func kindOf(fd protoreflect.FieldDescriptor, t reflect.Type) Kind {
	if fd.IsMap() {
		return None
	}
	if fd.Message() != nil {
		elem, err := protoregistry.GlobalTypes.FindMessageByName(fd.Message().FullName())
		if err != nil || fd.Kind() != protoreflect.MessageKind {
			return None
		}
		msg := reflect.TypeOf(elem.Zero().Interface())
		switch {
		case fd.IsList() && t == reflect.SliceOf(msg):
			return Messages
		case !fd.IsList() && t == msg:
			return Message
		}
		return None
	}
	var value, list Kind
	var vt reflect.Type
	switch fd.Kind() {
	case protoreflect.StringKind:
		value, list, vt = String, Strings, reflect.TypeFor[string]()
	case protoreflect.Int32Kind:
		value, list, vt = Int32, Int32s, reflect.TypeFor[int32]()
	case protoreflect.DoubleKind:
		value, list, vt = Float64, Float64s, reflect.TypeFor[float64]()
	case protoreflect.BoolKind:
		value, list, vt = Bool, None, reflect.TypeFor[bool]() // no Kind for a list of booleans
	default:
		return None
	}
	switch {
	case fd.IsList() && t == reflect.SliceOf(vt):
		return list
	case fd.IsList():
		return None
	case fd.HasPresence() && t == reflect.PointerTo(vt):
		return value + 1 // the pointer kind follows its value kind
	case !fd.HasPresence() && t == vt:
		return value
	}
	return None
}
