package jsoncodec

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf side of the generated code: DecodeProtoWire, which the plugin writes beside
// DecodeJSONWire, reads the binary encoding of a message with the same arenas and list chunks,
// so a 40-item request costs a few allocations, not one per optional field and list element.
//
// It reads only what an encoder writes for the message's type, and checks that as it reads (one
// pass over the bytes): every field known and of its wire type (a repeated number packed or one
// by one), every string valid UTF-8, nesting at most MaxProtoDepth. Anything else is
// ErrProtoWire, and the caller decodes the message with protobuf-go instead, whose answers (an
// unknown field kept and named, its errors) stand. Within that, it reads as protobuf-go does: the
// last value of a scalar field wins, lists are appended to, a message field given twice is
// merged, a map key given twice keeps its last value.

// ProtoMessage is what the generated code gives each message type it supports.
type ProtoMessage interface {
	// DecodeProtoWire merges the binary encoding b into the message; ErrProtoWire when b holds
	// what the decoder leaves to protobuf-go, and the message is then half decoded.
	DecodeProtoWire(d *ProtoDecoder, b []byte) error
}

// ErrProtoWire is DecodeProtoWire's answer to bytes it does not read.
var ErrProtoWire = errors.New("jsoncodec: not a message the generated protobuf decoder reads")

// MaxProtoDepth is the deepest a message nests in one DecodeProtoWire reads (the message itself
// at 0, a map's entry one deeper than its message): the contract's messages nest 3 deep, and a
// bound keeps a hostile message from running the stack down (protobuf-go's own is 10,000).
const MaxProtoDepth = 100

// ProtoDecoder holds what one message's decoding shares: the bytes it is cut from and the arenas.
type ProtoDecoder struct {
	data  []byte // the whole message
	text  string // a copy of data, made at the first string cut from it
	depth int    // of the message being read
	arenas
}

var protoDecoders = sync.Pool{New: func() any { return new(ProtoDecoder) }}

// DecodeProto decodes b into m with a pooled decoder. m's strings never share b's memory: the
// caller may reuse b once it returns.
func DecodeProto(m ProtoMessage, b []byte) error {
	d := protoDecoders.Get().(*ProtoDecoder)
	d.data, d.depth = b, 0 // a refusal returns from any depth
	err := m.DecodeProtoWire(d, b)
	d.data, d.text = nil, ""
	protoDecoders.Put(d)
	return err
}

// ProtoTag reads the tag at the start of b: the field number, its wire type, and the tag's length
// (< 0: no tag).
func ProtoTag(b []byte) (protowire.Number, protowire.Type, int) {
	if len(b) > 0 && b[0] < 0x80 && b[0] >= 8 { // fields 1 to 15: small enough to inline
		return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), 1
	}
	return protoTag(b)
}

func protoTag(b []byte) (protowire.Number, protowire.Type, int) {
	v, n := protowire.ConsumeVarint(b)
	if n < 0 || v>>3 == 0 || v>>3 > uint64(protowire.MaxValidNumber) {
		return 0, 0, -1
	}
	return protowire.Number(v >> 3), protowire.Type(v & 7), n
}

// varint is protowire.ConsumeVarint, with the one-byte case (most tags, lengths, small numbers)
// inline.
func varint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// delimited is the length-delimited value at the start of b and the length read (< 0: none).
func delimited(b []byte) ([]byte, int) {
	if len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b) { // under 128 bytes: inlined
		return b[1 : 1+b[0]], 1 + int(b[0])
	}
	return delimitedLong(b)
}

func delimitedLong(b []byte) ([]byte, int) {
	size, n := protowire.ConsumeVarint(b)
	if n < 0 || size > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(size)], n + int(size)
}

// Double, Int32, Int64, Bool and String read a scalar field's value of wire type typ at the start
// of b, and its length (< 0: not of the field's wire type, or cut short).
func (d *ProtoDecoder) Double(b []byte, typ protowire.Type) (float64, int) {
	if typ != protowire.Fixed64Type || len(b) < 8 {
		return 0, -1
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), 8
}

func (d *ProtoDecoder) Int32(b []byte, typ protowire.Type) (int32, int) {
	v, n := d.Int64(b, typ)
	return int32(v), n
}

func (d *ProtoDecoder) Int64(b []byte, typ protowire.Type) (int64, int) {
	if typ != protowire.VarintType {
		return 0, -1
	}
	v, n := varint(b)
	return int64(v), n
}

func (d *ProtoDecoder) Bool(b []byte, typ protowire.Type) (bool, int) {
	v, n := d.Int64(b, typ)
	return v != 0, n
}

func (d *ProtoDecoder) String(b []byte, typ protowire.Type) (string, int) {
	if typ != protowire.BytesType {
		return "", -1
	}
	v, n := delimited(b)
	if n < 0 || !utf8.Valid(v) {
		return "", -1
	}
	return d.share(v), n
}

// share is v, bytes of d.data, as a string cut from one copy of the message (no copy per string).
func (d *ProtoDecoder) share(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	off := cap(d.data) - cap(v)
	if off < 0 || off+len(v) > len(d.data) || &d.data[off] != &v[0] {
		return string(v)
	}
	if d.text == "" {
		d.text = string(d.data)
	}
	return d.text[off : off+len(v)]
}

// OptDouble, OptInt32, ... read an optional scalar field's value into the arenas.
func (d *ProtoDecoder) OptDouble(b []byte, typ protowire.Type) (*float64, int) {
	v, n := d.Double(b, typ)
	return d.doubles.put(v), n
}

func (d *ProtoDecoder) OptInt32(b []byte, typ protowire.Type) (*int32, int) {
	v, n := d.Int32(b, typ)
	return d.int32s.put(v), n
}

func (d *ProtoDecoder) OptInt64(b []byte, typ protowire.Type) (*int64, int) {
	v, n := d.Int64(b, typ)
	return d.int64s.put(v), n
}

func (d *ProtoDecoder) OptBool(b []byte, typ protowire.Type) (*bool, int) {
	v, n := d.Bool(b, typ)
	return d.bools.put(v), n
}

func (d *ProtoDecoder) OptString(b []byte, typ protowire.Type) (*string, int) {
	v, n := d.String(b, typ)
	return d.strs.put(v), n
}

// Doubles, Int32s, Int64s and Bools append a repeated number field's value at the start of b to
// list: one number of the field's wire type, or a packed run of them (protobuf-go takes both,
// whatever the field's declared encoding). A packed run lands in the arenas when list is empty.
func (d *ProtoDecoder) Doubles(list []float64, b []byte, typ protowire.Type) ([]float64, int) {
	if typ != protowire.BytesType {
		v, n := d.Double(b, typ)
		return append(list, v), n
	}
	v, n := delimited(b)
	if n < 0 || len(v)%8 != 0 {
		return list, -1
	}
	list = grow(&d.doubles, list, len(v)/8)
	for ; len(v) > 0; v = v[8:] {
		x, _ := protowire.ConsumeFixed64(v)
		list = append(list, math.Float64frombits(x))
	}
	return list, n
}

func (d *ProtoDecoder) Int32s(list []int32, b []byte, typ protowire.Type) ([]int32, int) {
	return varints(&d.int32s, list, b, typ, func(v uint64) int32 { return int32(v) })
}

func (d *ProtoDecoder) Int64s(list []int64, b []byte, typ protowire.Type) ([]int64, int) {
	return varints(&d.int64s, list, b, typ, func(v uint64) int64 { return int64(v) })
}

func (d *ProtoDecoder) Bools(list []bool, b []byte, typ protowire.Type) ([]bool, int) {
	return varints(&d.bools, list, b, typ, func(v uint64) bool { return v != 0 })
}

// Strings appends a repeated string field's value at the start of b to list.
func (d *ProtoDecoder) Strings(list []string, b []byte, typ protowire.Type) ([]string, int) {
	v, n := d.String(b, typ)
	return append(list, v), n
}

func varints[T any](a *arena[T], list []T, b []byte, typ protowire.Type, conv func(uint64) T) ([]T, int) {
	switch typ {
	case protowire.VarintType:
		v, n := varint(b)
		return append(list, conv(v)), n
	case protowire.BytesType:
	default:
		return list, -1
	}
	v, n := delimited(b)
	if n < 0 {
		return list, -1
	}
	k := 0
	for _, c := range v {
		if c < 0x80 {
			k++ // the last byte of a varint
		}
	}
	list = grow(a, list, k)
	for len(v) > 0 {
		x, m := varint(v)
		if m < 0 {
			return list, -1
		}
		list = append(list, conv(x))
		v = v[m:]
	}
	return list, n
}

// grow gives an empty list room for k values from a (an append past them copies them out).
func grow[T any](a *arena[T], list []T, k int) []T {
	if len(list) > 0 || k == 0 {
		return list
	}
	return a.take(k)[:0]
}

// Message merges a message field's value at the start of b into m.
func (d *ProtoDecoder) Message(m ProtoMessage, b []byte, typ protowire.Type) int {
	if typ != protowire.BytesType || d.depth >= MaxProtoDepth {
		return -1
	}
	v, n := delimited(b)
	if n < 0 {
		return -1
	}
	d.depth++
	err := m.DecodeProtoWire(d, v)
	d.depth--
	if err != nil {
		return -1
	}
	return n
}

// ProtoMessages appends to list the element of the repeated message field num at the start of b
// and every element of it that directly follows (an encoder writes a list's elements in one run),
// taken from pool's chunks, and returns the run's length. A list met first gets the run's exact
// size.
func ProtoMessages[T any, P interface {
	*T
	ProtoMessage
}](d *ProtoDecoder, list []P, b []byte, num protowire.Number, typ protowire.Type, pool *Pool[T]) ([]P, int) {
	if typ != protowire.BytesType || d.depth >= MaxProtoDepth {
		return list, -1
	}
	g, _ := pool.p.Get().(*gathered[T])
	if g == nil {
		g = &gathered[T]{}
	}
	defer func() {
		clear(g.ptrs) // the pool must not keep a request's messages alive
		g.ptrs = g.ptrs[:0]
		pool.p.Put(g)
	}()
	tag := protowire.EncodeTag(num, protowire.BytesType)
	end := 0
	for {
		v, n := delimited(b[end:])
		if n < 0 {
			return list, -1
		}
		m := g.next()
		d.depth++
		err := P(m).DecodeProtoWire(d, v)
		d.depth--
		if err != nil {
			return list, -1
		}
		g.ptrs = append(g.ptrs, m)
		end += n
		t, tn := varint(b[end:])
		if tn < 0 || t != tag {
			break
		}
		end += tn
	}
	if list == nil {
		list = make([]P, 0, len(g.ptrs))
	}
	for _, m := range g.ptrs {
		list = append(list, m)
	}
	return list, end
}

// ProtoMap sets the entry of a map field from strings at the start of b in *m (made when nil):
// its key and value (with read), either missing taken as zero, a key given again replaced.
func ProtoMap[V any](d *ProtoDecoder, m *map[string]V, b []byte, typ protowire.Type, read func(*ProtoDecoder, []byte, protowire.Type) (V, int)) int {
	if typ != protowire.BytesType || d.depth >= MaxProtoDepth { // an entry is a message one deeper
		return -1
	}
	entry, n := delimited(b)
	if n < 0 {
		return -1
	}
	var key string
	var val V
	for len(entry) > 0 {
		num, t, tn := ProtoTag(entry)
		if tn < 0 {
			return -1
		}
		entry = entry[tn:]
		var vn int
		switch num {
		case 1:
			key, vn = d.String(entry, t)
		case 2:
			val, vn = read(d, entry, t)
		default:
			return -1
		}
		if vn < 0 {
			return -1
		}
		entry = entry[vn:]
	}
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = val
	return n
}
