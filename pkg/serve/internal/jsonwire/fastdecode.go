package jsonwire

import (
	"reflect"
	"unsafe"

	"github.com/go-faster/jx"
)

// fastField decodes f's value into the generated struct at base (layout.go).
func (dc *decoder) fastField(f *fieldPlan, base unsafe.Pointer) error {
	t := dc.d.Next()
	if t == jx.Null {
		return dc.syntax(dc.d.Null()) // null leaves the field unset, as protojson does
	}
	ptr := unsafe.Add(base, f.offset)
	switch f.goKind {
	case goString, goPtrString:
		s, ok, err := dc.readString(f)
		if ok {
			if f.goKind == goString {
				*(*string)(ptr) = s
			} else {
				*(**string)(ptr) = dc.strs.put(s)
			}
		}
		return err
	case goInt32, goPtrInt32:
		text, _, err := dc.numberTextOf(t)
		if err != nil || text == nil {
			return err
		}
		if n, ok := dc.integer(f.fd.Kind(), text); ok {
			if f.goKind == goInt32 {
				*(*int32)(ptr) = int32(n)
			} else {
				*(**int32)(ptr) = dc.ints.put(int32(n))
			}
		}
		return nil
	case goFloat64, goPtrFloat64:
		text, quoted, err := dc.numberTextOf(t)
		if err != nil || text == nil {
			return err
		}
		if v, ok := dc.float(f.fd.Kind(), text, quoted); ok {
			dc.storeFloat(f, base, v)
		}
		return nil
	case goBool, goPtrBool:
		if dc.d.Next() != jx.Bool {
			dc.problem("must be true or false" + got(dc.d))
			return dc.skip()
		}
		b, err := dc.d.Bool()
		if err != nil {
			return dc.syntax(err)
		}
		if f.goKind == goBool {
			*(*bool)(ptr) = b
		} else {
			*(**bool)(ptr) = dc.bools.put(b)
		}
		return nil
	case goMessage:
		v := reflect.New(f.sub.goType)
		*(*unsafe.Pointer)(ptr) = v.UnsafePointer()
		return dc.object(f.sub, nil, v.UnsafePointer())
	}
	return dc.fastList(f, ptr)
}

func (dc *decoder) storeFloat(f *fieldPlan, base unsafe.Pointer, v float64) {
	ptr := unsafe.Add(base, f.offset)
	if f.goKind == goFloat64 {
		*(*float64)(ptr) = v
	} else {
		*(**float64)(ptr) = dc.floats.put(v)
	}
}

// fastList decodes an array into the slice field at ptr in one pass: message elements come from
// the decoder's chunks of their type (elementsOf), their pointers are gathered on the decoder's
// stack and copied once into an exact-size slice.
func (dc *decoder) fastList(f *fieldPlan, ptr unsafe.Pointer) error {
	d := dc.d
	if d.Next() != jx.Array {
		dc.problem("must be an array")
		return dc.skip()
	}
	iter, err := d.ArrIter()
	if err != nil {
		return dc.syntax(err)
	}
	switch f.goKind {
	case goMessages:
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
			switch d.Next() {
			case jx.Object:
				err = dc.message(f.sub, nil, e)
			case jx.Null:
				dc.problem("must be an object, not null")
				err = dc.skip()
			default:
				err = dc.object(f.sub, nil, e)
			}
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
		dc.storeList(ptr, elem, start)
		return nil
	case goFloat64s:
		out := (*[]float64)(ptr)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				text, quoted, err := dc.numberText()
				if err == nil && text != nil {
					if v, ok := dc.float(f.fd.Kind(), text, quoted); ok {
						*out = append(*out, v)
					}
				}
				return err
			}); err != nil {
				return err
			}
		}
	case goInt32s:
		out := (*[]int32)(ptr)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				text, _, err := dc.numberText()
				if err == nil && text != nil {
					if v, ok := dc.integer(f.fd.Kind(), text); ok {
						*out = append(*out, int32(v))
					}
				}
				return err
			}); err != nil {
				return err
			}
		}
	case goStrings:
		out := (*[]string)(ptr)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				s, ok, err := dc.readString(f)
				if ok {
					*out = append(*out, s)
				}
				return err
			}); err != nil {
				return err
			}
		}
	}
	return dc.syntax(iter.Err())
}

// elements hands out zero elements of one message type from chunks that are never moved, so the
// pointers handed out stay valid, and never reused: an element is handed out once. A decoder keeps
// one per element type across the requests it decodes (elementsOf), so a chunk grows to
// maxChunkElements and serves many requests: a 40-element list costs no allocation of its own
// most of the time (it cost two: chunks of 16 and 32). A chunk lives as long as any element from
// it; handlers do not keep requests past their answer.
type elements struct {
	chunk     unsafe.Pointer
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
func (e *elements) next(elem *plan) unsafe.Pointer {
	if e.used == e.cap {
		e.cap = min(max(2*e.cap, 16), maxChunkElements)
		e.chunk, e.used = reflect.MakeSlice(elem.chunkType, e.cap, e.cap).UnsafePointer(), 0
	}
	p := unsafe.Add(e.chunk, uintptr(e.used)*elem.goType.Size())
	e.used++
	return p
}

// storeList stores the elements gathered on the decoder's stack from start as an exact-size
// []*elem at ptr, and pops them.
func (dc *decoder) storeList(ptr unsafe.Pointer, elem *plan, start int) {
	if n := len(dc.ptrs) - start; n > 0 {
		out := reflect.MakeSlice(elem.listType, n, n)
		copy(unsafe.Slice((*unsafe.Pointer)(out.UnsafePointer()), n), dc.ptrs[start:])
		*(*[]unsafe.Pointer)(ptr) = unsafe.Slice((*unsafe.Pointer)(out.UnsafePointer()), n)
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
		dc.problem("must be a " + elementWord(f) + ", not null")
		return dc.skip()
	}
	return read()
}

func elementWord(f *fieldPlan) string {
	if f.goKind == goStrings {
		return "string"
	}
	return "number"
}
