package jsonwire

import (
	"sync"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// The protobuf fast path's state (protodecode.go): it writes the generated structs at the offsets
// package layout verified, with optional scalars from arenas and list elements from chunks kept
// across requests. The JSON front no longer uses any of it (its codecs are generated).

type decoder struct {
	// ptrs is the stack of list elements being gathered.
	ptrs []layout.Ptr
	// elems are the chunks list elements come from, one per element type, kept across requests.
	elems map[*plan]*elements
	// Arenas of optional scalars.
	strs   arena[string]
	ints   arena[int32]
	floats arena[float64]
	bools  arena[bool]
}

// decoders keeps decoders between messages: their stacks keep their capacity, and their arenas'
// unused room serves the next message (a used slot is never written again, so messages decoded
// earlier are untouched).
var decoders = sync.Pool{New: func() any { return &decoder{elems: map[*plan]*elements{}} }}

func (dc *decoder) release() {
	dc.dropList(0)
	decoders.Put(dc)
}

// store writes v into f's field of the struct at base, or for an optional field (one with
// presence: layout verified it is a pointer) a pointer to v taken from the arena a.
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
