package layout

import (
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/proto"
)

// Ptr is the address of a generated struct (or the zero Ptr for none). It keeps what it points to
// alive, as a Go pointer does.
type Ptr struct{ p unsafe.Pointer }

// Addr is the address of the struct m points to. The caller has checked that m's type is a
// Struct's PtrType.
func Addr(m proto.Message) Ptr { return Ptr{reflect.ValueOf(m).UnsafePointer()} }

// New is a new zero struct of s's type.
func New(s *Struct) Ptr { return Ptr{reflect.New(s.Type).UnsafePointer()} }

// IsNil reports whether p is the zero Ptr.
func (p Ptr) IsNil() bool { return p.p == nil }

// Field is the field at offset off of the struct at p, as a *T. T must be the Go type of the
// field's Kind (Ptr for Message, []Ptr for Messages): Of verified each field's type and offset,
// and *Msg and []*Msg have the memory layout of Ptr and []Ptr.
func Field[T any](p Ptr, off uintptr) *T { return (*T)(unsafe.Add(p.p, off)) }

// MakeChunk is a run of n zero structs of s's type that never moves, for Element.
func MakeChunk(s *Struct, n int) Ptr {
	return Ptr{reflect.MakeSlice(s.ChunkType, n, n).UnsafePointer()}
}

// Element is the i-th struct of the chunk c of s's type.
func Element(s *Struct, c Ptr, i int) Ptr {
	return Ptr{unsafe.Add(c.p, uintptr(i)*s.Type.Size())}
}

// SetList stores elems, structs of s's type, as an exact-size []*Msg in the list field at off.
func SetList(p Ptr, off uintptr, s *Struct, elems []Ptr) {
	n := len(elems)
	out := reflect.MakeSlice(s.ListType, n, n)
	list := unsafe.Slice((*Ptr)(out.UnsafePointer()), n)
	copy(list, elems)
	*Field[[]Ptr](p, off) = list
}
