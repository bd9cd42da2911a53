package jsonwire

import (
	"github.com/go-faster/jx"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// fastField decodes f's value, of JSON type t, into the generated struct at base (package layout).
func (dc *decoder) fastField(f *fieldPlan, base layout.Ptr, t jx.Type) error {
	switch f.kind {
	case layout.String, layout.StringPtr:
		v, ok, err := dc.readString(f, t)
		if ok {
			store(f, base, &dc.strs, v)
		}
		return err
	case layout.Int32, layout.Int32Ptr:
		v, ok, err := dc.readInt32(f, t)
		if ok {
			store(f, base, &dc.ints, v)
		}
		return err
	case layout.Float64, layout.Float64Ptr:
		v, ok, err := dc.readFloat(f, t)
		if ok {
			store(f, base, &dc.floats, v)
		}
		return err
	case layout.Bool, layout.BoolPtr:
		v, ok, err := dc.readBool(t)
		if ok {
			store(f, base, &dc.bools, v)
		}
		return err
	case layout.Message:
		sub := layout.New(f.sub.st)
		*layout.Field[layout.Ptr](base, f.offset) = sub
		return dc.object(f.sub, nil, sub, t)
	case layout.Messages:
		return dc.fastMessages(f, base)
	case layout.Float64s:
		return fastList(dc, f, base, dc.readFloat)
	case layout.Int32s:
		return fastList(dc, f, base, dc.readInt32)
	default: // layout.Strings
		return fastList(dc, f, base, dc.readString)
	}
}

// fastList reads f's array with read, element by element, onto its list in the struct at base.
func fastList[T any](dc *decoder, f *fieldPlan, base layout.Ptr, read func(*fieldPlan, jx.Type) (T, bool, error)) error {
	out := layout.Field[[]T](base, f.offset)
	return dc.eachElement(f, func(t jx.Type) error {
		v, ok, err := read(f, t)
		if ok {
			*out = append(*out, v)
		}
		return err
	})
}

// store writes v into f's field of the struct at base, or for an optional field (one with
// presence: layout verified it is a pointer) a pointer to v taken from the arena a. The JSON and
// protobuf fast paths share it.
func store[T any](f *fieldPlan, base layout.Ptr, a *arena[T], v T) {
	if f.presence {
		*layout.Field[*T](base, f.offset) = a.put(v)
	} else {
		*layout.Field[T](base, f.offset) = v
	}
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

// fastMessages decodes an array into f's list of messages in one pass: the elements come from the
// decoder's chunks of their type (elementsOf), their pointers are gathered on the decoder's stack
// and copied once into an exact-size slice.
func (dc *decoder) fastMessages(f *fieldPlan, base layout.Ptr) error {
	start, chunks := len(dc.ptrs), dc.elementsOf(f.sub)
	err := dc.eachElement(f, func(t jx.Type) error {
		e := chunks.next(f.sub)
		dc.ptrs = append(dc.ptrs, e)
		return dc.object(f.sub, nil, e, t)
	})
	if err != nil {
		dc.dropList(start)
		return err
	}
	dc.storeList(base, f, start)
	return nil
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
