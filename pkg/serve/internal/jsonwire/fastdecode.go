package jsonwire

import (
	"github.com/go-faster/jx"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// fastField decodes f's value into the generated struct at base (package layout).
func (dc *decoder) fastField(f *fieldPlan, base layout.Ptr) error {
	t := dc.d.Next()
	if t == jx.Null {
		return dc.syntax(dc.d.Null()) // null leaves the field unset, as protojson does
	}
	switch f.kind {
	case layout.String, layout.StringPtr:
		return dc.fastString(f, base)
	case layout.Int32, layout.Int32Ptr:
		text, quoted, err := dc.numberTextOf(t)
		if err != nil || text == nil {
			return err
		}
		if n, ok := dc.integer(f.fd.Kind(), text, quoted); ok {
			if f.kind == layout.Int32 {
				*layout.Field[int32](base, f.offset) = int32(n)
			} else {
				*layout.Field[*int32](base, f.offset) = dc.ints.put(int32(n))
			}
		}
		return nil
	case layout.Float64, layout.Float64Ptr:
		text, quoted, err := dc.numberTextOf(t)
		if err != nil || text == nil {
			return err
		}
		if v, ok := dc.float(f.fd.Kind(), text, quoted); ok {
			dc.storeFloat(f, base, v)
		}
		return nil
	case layout.Bool, layout.BoolPtr:
		return dc.fastBool(f, base)
	case layout.Message:
		sub := layout.New(f.sub.st)
		*layout.Field[layout.Ptr](base, f.offset) = sub
		return dc.object(f.sub, nil, sub)
	}
	return dc.fastList(f, base)
}

// fastString decodes a string into f's field (a pointer to it when the field is optional).
func (dc *decoder) fastString(f *fieldPlan, base layout.Ptr) error {
	s, ok, err := dc.readString(f)
	if ok {
		if f.kind == layout.String {
			*layout.Field[string](base, f.offset) = s
		} else {
			*layout.Field[*string](base, f.offset) = dc.strs.put(s)
		}
	}
	return err
}

// fastBool decodes true or false into f's field (a pointer to it when the field is optional).
func (dc *decoder) fastBool(f *fieldPlan, base layout.Ptr) error {
	if dc.d.Next() != jx.Bool {
		dc.problem("must be true or false" + got(dc.d))
		return dc.skip()
	}
	b, err := dc.d.Bool()
	if err != nil {
		return dc.syntax(err)
	}
	if f.kind == layout.Bool {
		*layout.Field[bool](base, f.offset) = b
	} else {
		*layout.Field[*bool](base, f.offset) = dc.bools.put(b)
	}
	return nil
}

func (dc *decoder) storeFloat(f *fieldPlan, base layout.Ptr, v float64) {
	if f.kind == layout.Float64 {
		*layout.Field[float64](base, f.offset) = v
	} else {
		*layout.Field[*float64](base, f.offset) = dc.floats.put(v)
	}
}

// fastList decodes an array into f's slice field in one pass: message elements come from the
// decoder's chunks of their type (elementsOf), their pointers are gathered on the decoder's stack
// and copied once into an exact-size slice.
func (dc *decoder) fastList(f *fieldPlan, base layout.Ptr) error {
	d := dc.d
	if d.Next() != jx.Array {
		dc.problem("must be an array")
		return dc.skip()
	}
	iter, err := d.ArrIter()
	if err != nil {
		return dc.syntax(err)
	}
	switch f.kind {
	case layout.Messages:
		return dc.fastMessages(f, base, &iter)
	case layout.Float64s:
		out := layout.Field[[]float64](base, f.offset)
		err = dc.eachScalar(f, &iter, func() error { return dc.appendFloat(f, out) })
	case layout.Int32s:
		out := layout.Field[[]int32](base, f.offset)
		err = dc.eachScalar(f, &iter, func() error { return dc.appendInt32(f, out) })
	case layout.Strings:
		out := layout.Field[[]string](base, f.offset)
		err = dc.eachScalar(f, &iter, func() error { return dc.appendString(f, out) })
	}
	if err != nil {
		return err
	}
	return dc.syntax(iter.Err())
}

// eachScalar reads each element of a list of scalars with read.
func (dc *decoder) eachScalar(f *fieldPlan, iter *jx.ArrIter, read func() error) error {
	for i := 0; iter.Next(); i++ {
		if err := dc.listScalar(f, i, read); err != nil {
			return err
		}
	}
	return nil
}

// appendFloat reads a number onto out; a refused one is reported and left out.
func (dc *decoder) appendFloat(f *fieldPlan, out *[]float64) error {
	text, quoted, err := dc.numberText()
	if err == nil && text != nil {
		if v, ok := dc.float(f.fd.Kind(), text, quoted); ok {
			*out = append(*out, v)
		}
	}
	return err
}

// appendInt32 reads a whole number onto out; a refused one is reported and left out.
func (dc *decoder) appendInt32(f *fieldPlan, out *[]int32) error {
	text, quoted, err := dc.numberText()
	if err == nil && text != nil {
		if v, ok := dc.integer(f.fd.Kind(), text, quoted); ok {
			*out = append(*out, int32(v))
		}
	}
	return err
}

// appendString reads a string onto out; a refused one is reported and left out.
func (dc *decoder) appendString(f *fieldPlan, out *[]string) error {
	s, ok, err := dc.readString(f)
	if ok {
		*out = append(*out, s)
	}
	return err
}

// fastMessages decodes the elements of a list of messages, each from the decoder's chunks of its
// type, and stores the list once it is whole.
func (dc *decoder) fastMessages(f *fieldPlan, base layout.Ptr, iter *jx.ArrIter) error {
	elem := f.sub
	start := len(dc.ptrs)
	chunks := dc.elementsOf(elem)
	for i := 0; iter.Next(); i++ {
		if f.maxLen > 0 && i > f.maxLen {
			dc.dropList(start)
			return dc.tooLong(f)
		}
		e := chunks.next(elem)
		dc.ptrs = append(dc.ptrs, e)
		dc.path = append(dc.path, step{index: i})
		err := dc.fastElement(f, e)
		dc.path = dc.path[:len(dc.path)-1]
		if err != nil {
			dc.dropList(start)
			return err
		}
	}
	if err := iter.Err(); err != nil {
		dc.dropList(start)
		return dc.syntax(err)
	}
	dc.storeList(base, f, start)
	return nil
}

// fastElement decodes one element of a list of messages into e: an object, or for positional
// messages a number array; null is refused.
func (dc *decoder) fastElement(f *fieldPlan, e layout.Ptr) error {
	switch dc.d.Next() {
	case jx.Object:
		return dc.message(f.sub, nil, e)
	case jx.Null:
		dc.problem("must be an object, not null")
		return dc.skip()
	default:
		return dc.object(f.sub, nil, e)
	}
}

// elements hands out zero elements of one message type from chunks that are never moved, so the
// pointers handed out stay valid, and never reused: an element is handed out once. A decoder keeps
// one per element type across the requests it decodes (elementsOf), so a chunk grows to
// maxChunkElements and serves many requests: a 40-element list costs no allocation of its own
// most of the time (it cost two: chunks of 16 and 32). A chunk lives as long as any element from
// it; handlers do not keep requests past their answer.
type elements struct {
	chunk     layout.Ptr
	used, cap int
}

// maxChunkElements bounds a chunk: a 100,000-student list takes 25 chunks.
const maxChunkElements = 4096

// elementsOf is the decoder's source of elements of the message type p.
func (dc *decoder) elementsOf(p *plan) *elements {
	e, ok := dc.elems[p]
	if !ok {
		if dc.elems == nil {
			dc.elems = map[*plan]*elements{}
		}
		e = &elements{}
		dc.elems[p] = e
	}
	return e
}

// next is a new zero element of the message type elem (fast plans only).
func (e *elements) next(elem *plan) layout.Ptr {
	if e.used == e.cap {
		e.cap = min(max(2*e.cap, 16), maxChunkElements)
		e.chunk, e.used = layout.MakeChunk(elem.st, e.cap), 0
	}
	p := layout.Element(elem.st, e.chunk, e.used)
	e.used++
	return p
}

// storeList stores the elements gathered on the decoder's stack from start as an exact-size list
// in f's field of the struct at base, and pops them.
func (dc *decoder) storeList(base layout.Ptr, f *fieldPlan, start int) {
	if len(dc.ptrs) > start {
		layout.SetList(base, f.offset, f.sub.st, dc.ptrs[start:])
	}
	dc.dropList(start)
}

// dropList pops the elements gathered from start; the stack must not keep a request's messages
// alive.
func (dc *decoder) dropList(start int) {
	clear(dc.ptrs[start:])
	dc.ptrs = dc.ptrs[:start]
}

// listScalar decodes element i of a scalar list with read, under the element's path.
func (dc *decoder) listScalar(f *fieldPlan, i int, read func() error) error {
	if f.maxLen > 0 && i > f.maxLen {
		return dc.tooLong(f)
	}
	dc.path = append(dc.path, step{index: i})
	defer func() { dc.path = dc.path[:len(dc.path)-1] }()
	if dc.d.Next() == jx.Null {
		return dc.nullElement(f)
	}
	return read()
}

// nullElement refuses a null in a list of scalars (both paths say the same).
func (dc *decoder) nullElement(f *fieldPlan) error {
	switch f.fd.Kind() {
	case protoreflect.StringKind:
		dc.problem("must be a string, not null")
	case protoreflect.BoolKind:
		dc.problem("must be true or false, not null")
	default:
		dc.problem("must be a number, not null")
	}
	return dc.skip()
}
