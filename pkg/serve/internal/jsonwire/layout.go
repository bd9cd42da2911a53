package jsonwire

import (
	"reflect"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The fast path decodes straight into the generated Go structs: it finds each field's offset
// once, then stores values with plain pointer writes, taking the optional scalars' pointers from
// arenas and each list's elements from one exact-size slice. Setting the same fields through
// protoreflect allocates a pointer per optional scalar and per element (≈ 250 allocations for a
// 40-item request against ≈ 10). The differential tests hold both paths to protojson.

// goKind is how a field is laid out in its generated Go struct.
type goKind uint8

const (
	goNone       goKind = iota // not mapped: the message takes the protoreflect path
	goString                   // string
	goPtrString                // *string (proto3 optional)
	goInt32                    // int32
	goPtrInt32                 // *int32
	goFloat64                  // float64
	goPtrFloat64               // *float64
	goBool                     // bool
	goPtrBool                  // *bool
	goMessage                  // *Msg
	goMessages                 // []*Msg
	goStrings                  // []string
	goInt32s                   // []int32
	goFloat64s                 // []float64
)

// layout maps p's fields onto md's generated Go struct; p.fast is false when any field does not
// fit the kinds above.
func layout(p *plan, md protoreflect.MessageDescriptor) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return
	}
	t := reflect.TypeOf(mt.Zero().Interface())
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	t = t.Elem()
	byName := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		for _, part := range strings.Split(sf.Tag.Get("protobuf"), ",") {
			if name, ok := strings.CutPrefix(part, "name="); ok {
				byName[name] = sf
			}
		}
	}
	p.goType = t
	uf, ok := t.FieldByName("unknownFields")
	if !ok || uf.Type != reflect.TypeOf([]byte(nil)) {
		return
	}
	p.unknownOffset = uf.Offset
	for _, f := range p.fields {
		sf, ok := byName[string(f.fd.Name())]
		if !ok {
			return
		}
		f.offset = sf.Offset
		f.goKind = kindOf(f, sf.Type)
		if f.goKind == goNone {
			return
		}
		if f.goKind == goMessage || f.goKind == goMessages {
			if f.sub == nil || !f.sub.fast {
				return
			}
		}
	}
	p.fast = true
	p.ptrType = reflect.PointerTo(t)
	p.chunkType, p.listType = reflect.SliceOf(t), reflect.SliceOf(p.ptrType) // looked up once, not per list
	maxNum := 0
	for _, f := range p.fields {
		maxNum = max(maxNum, int(f.fd.Number()))
	}
	if maxNum <= 1024 {
		p.byNumber = make([]*fieldPlan, maxNum+1)
		for _, f := range p.fields {
			p.byNumber[f.fd.Number()] = f
		}
	}
}

func kindOf(f *fieldPlan, t reflect.Type) goKind {
	k := f.fd.Kind()
	switch {
	case f.list && k == protoreflect.MessageKind:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Pointer {
			return goMessages
		}
	case f.list && k == protoreflect.StringKind && t == reflect.TypeOf([]string(nil)):
		return goStrings
	case f.list && k == protoreflect.Int32Kind && t == reflect.TypeOf([]int32(nil)):
		return goInt32s
	case f.list && k == protoreflect.DoubleKind && t == reflect.TypeOf([]float64(nil)):
		return goFloat64s
	case f.list:
	case k == protoreflect.MessageKind && t.Kind() == reflect.Pointer:
		return goMessage
	case k == protoreflect.StringKind && t == reflect.TypeOf(""):
		return goString
	case k == protoreflect.StringKind && t == reflect.TypeOf((*string)(nil)):
		return goPtrString
	case k == protoreflect.Int32Kind && t == reflect.TypeOf(int32(0)):
		return goInt32
	case k == protoreflect.Int32Kind && t == reflect.TypeOf((*int32)(nil)):
		return goPtrInt32
	case k == protoreflect.DoubleKind && t == reflect.TypeOf(float64(0)):
		return goFloat64
	case k == protoreflect.DoubleKind && t == reflect.TypeOf((*float64)(nil)):
		return goPtrFloat64
	case k == protoreflect.BoolKind && t == reflect.TypeOf(false):
		return goBool
	case k == protoreflect.BoolKind && t == reflect.TypeOf((*bool)(nil)):
		return goPtrBool
	}
	return goNone
}

// arena hands out pointers to values of T from chunks that are never moved, so a request's
// optional scalars cost one allocation per chunk instead of one each.
type arena[T any] struct{ chunk []T }

func (a *arena[T]) put(v T) *T {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]T, 0, min(max(2*cap(a.chunk), 16), 1<<14))
	}
	a.chunk = append(a.chunk, v)
	return &a.chunk[len(a.chunk)-1]
}
