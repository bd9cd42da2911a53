package jsonwire

import (
	"reflect"
	"unsafe"

	"github.com/go-faster/jx"
)

// fastField decodes f's value into the generated struct at base (layout.go).
func (dc *decoder) fastField(f *fieldPlan, base unsafe.Pointer) error {
	if dc.d.Next() == jx.Null {
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
		text, _, err := dc.numberText()
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
		text, quoted, err := dc.numberText()
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

// fastList decodes an array into the slice field at ptr, allocating its elements at once: it
// counts the elements first (a cheap second tokenizing pass over the array's bytes).
func (dc *decoder) fastList(f *fieldPlan, ptr unsafe.Pointer) error {
	if dc.d.Next() != jx.Array {
		dc.problem("must be an array")
		return dc.skip()
	}
	raw, err := dc.d.Raw()
	if err != nil {
		return dc.syntax(err)
	}
	n := countElements(raw)
	if n == 0 {
		return nil
	}
	outer := dc.d
	d := jx.GetDecoder()
	d.ResetBytes(raw)
	dc.d = d
	defer func() {
		dc.d = outer
		jx.PutDecoder(d)
	}()
	iter, err := d.ArrIter()
	if err != nil {
		return dc.syntax(err)
	}
	switch f.goKind {
	case goMessages:
		elem := f.sub.goType
		backing := reflect.MakeSlice(reflect.SliceOf(elem), n, n)
		ptrs := reflect.MakeSlice(reflect.SliceOf(reflect.PointerTo(elem)), n, n)
		bp, pp := backing.UnsafePointer(), ptrs.UnsafePointer()
		for i := 0; iter.Next(); i++ {
			e := unsafe.Add(bp, uintptr(i)*elem.Size())
			*(*unsafe.Pointer)(unsafe.Add(pp, uintptr(i)*unsafe.Sizeof(uintptr(0)))) = e
			dc.path = append(dc.path, step{index: i})
			if d.Next() == jx.Null {
				dc.problem("must be an object, not null")
				err = dc.skip()
			} else {
				err = dc.object(f.sub, nil, e)
			}
			dc.path = dc.path[:len(dc.path)-1]
			if err != nil {
				return err
			}
		}
		reflect.NewAt(ptrs.Type(), ptr).Elem().Set(ptrs)
	case goFloat64s:
		out := make([]float64, 0, n)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				text, quoted, err := dc.numberText()
				if err == nil && text != nil {
					if v, ok := dc.float(f.fd.Kind(), text, quoted); ok {
						out = append(out, v)
					}
				}
				return err
			}); err != nil {
				return err
			}
		}
		*(*[]float64)(ptr) = out
	case goInt32s:
		out := make([]int32, 0, n)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				text, _, err := dc.numberText()
				if err == nil && text != nil {
					if v, ok := dc.integer(f.fd.Kind(), text); ok {
						out = append(out, int32(v))
					}
				}
				return err
			}); err != nil {
				return err
			}
		}
		*(*[]int32)(ptr) = out
	case goStrings:
		out := make([]string, 0, n)
		for i := 0; iter.Next(); i++ {
			if err := dc.listScalar(f, i, func() error {
				s, ok, err := dc.readString(f)
				if ok {
					out = append(out, s)
				}
				return err
			}); err != nil {
				return err
			}
		}
		*(*[]string)(ptr) = out
	}
	return dc.syntax(iter.Err())
}

// listScalar decodes element i of a scalar list with read, under the element's path.
func (dc *decoder) listScalar(f *fieldPlan, i int, read func() error) error {
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

// countElements counts the values of a JSON array (already validated by the tokenizer).
func countElements(raw []byte) int {
	d := jx.GetDecoder()
	defer jx.PutDecoder(d)
	d.ResetBytes(raw)
	iter, err := d.ArrIter()
	if err != nil {
		return 0
	}
	n := 0
	for iter.Next() {
		if d.Skip() != nil {
			break
		}
		n++
	}
	return n
}
