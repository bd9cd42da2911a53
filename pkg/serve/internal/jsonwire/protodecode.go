package jsonwire

import (
	"math"
	"reflect"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// protobuf-go's Unmarshal allocates each list element and each optional scalar on its own (a
// 40-item request: ≈ 90 allocations, about a tenth of the call's CPU); TryUnmarshalProtobuf writes
// the generated structs as the JSON decoder does.
//
// It decodes only what a protobuf encoder writes for these messages in the usual way, and
// declines everything else — lists of 64-bit numbers or bools (the contract has none), an unknown
// field, a wire type other than the field's, a list split by other fields, an unpacked number list,
// a message field given twice, a string that is not UTF-8, nesting deeper than maxProtoDepth, a
// message whose generated struct package layout did not verify — so that protobuf-go, which knows
// every case, decodes those. A differential test and a fuzz target hold the two to the same
// messages.

// maxProtoDepth bounds the nesting the fast path follows (the contract's messages nest 3 deep).
const maxProtoDepth = 32

// TryUnmarshalProtobuf decodes the protobuf encoding b into m, which it resets, as proto.Unmarshal
// would, and reports whether it did. When it returns false, b holds something it leaves to
// proto.Unmarshal (or m's type is not one it decodes): m is then in an unspecified state, and the
// caller resets it and calls proto.Unmarshal. Strings are copied: b may be reused afterwards.
func (c *Codec) TryUnmarshalProtobuf(b []byte, m proto.Message) bool {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if !p.fast || p.byNumber == nil || reflect.TypeOf(m) != p.st.PtrType {
		return false
	}
	proto.Reset(m)
	d := decoders.Get().(*decoder) // the JSON decoder's arenas and element stack serve here too
	defer d.release()
	return d.protoMessage(p, layout.Addr(m), b, 0)
}

// protoList is a message list being gathered: its elements are on the decoder's stack from start.
type protoList struct {
	start  int
	chunks *elements
}

func (d *decoder) protoMessage(p *plan, base layout.Ptr, b []byte, depth int) bool {
	if depth > maxProtoDepth {
		return false
	}
	var seen uint64
	var open *fieldPlan  // the list whose elements are arriving
	var gather protoList // its elements so far, when they are messages
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || int(num) >= len(p.byNumber) {
			return false
		}
		b = b[n:]
		f := p.byNumber[num]
		if f == nil {
			return false // unknown: protobuf-go keeps it for the unknown-field check
		}
		if !d.protoOpen(f, base, seen, &open, &gather) {
			return false
		}
		seen |= f.bit
		var ok bool
		if b, ok = d.protoValue(f, typ, base, b, &gather, depth); !ok {
			return false
		}
	}
	if open != nil && open.kind == layout.Messages {
		d.storeList(base, open, gather.start)
	}
	return true
}

// protoOpen follows the list whose elements are arriving (open, and gather for a list of
// messages) as field f arrives, seen holding the fields that came before. It reports false for
// what it leaves to protobuf-go: a list split by other fields, a message field given twice (which
// protobuf merges).
func (d *decoder) protoOpen(f *fieldPlan, base layout.Ptr, seen uint64, open **fieldPlan, gather *protoList) bool {
	if *open != nil && *open != f {
		if (*open).kind == layout.Messages {
			d.storeList(base, *open, gather.start)
		}
		*open = nil
	}
	if seen&f.bit != 0 && f.list && *open != f {
		return false // a list split by other fields
	}
	if f.list && *open != f {
		*open = f
		if f.kind == layout.Messages {
			*gather = protoList{start: len(d.ptrs), chunks: d.elementsOf(f.sub)}
		}
	}
	return seen&f.bit == 0 || f.kind != layout.Message
}

// protoValue decodes the value of field f, of wire type typ, from b into base, and returns the
// rest of b; ok is false when the value is not what the field takes.
func (d *decoder) protoValue(f *fieldPlan, typ protowire.Type, base layout.Ptr, b []byte, gather *protoList, depth int) (rest []byte, ok bool) {
	switch f.kind {
	case layout.Int32, layout.Int32Ptr, layout.Bool, layout.BoolPtr:
		if typ != protowire.VarintType {
			return nil, false
		}
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, false
		}
		if f.kind == layout.Int32 || f.kind == layout.Int32Ptr {
			store(f, base, &d.ints, int32(v))
		} else {
			store(f, base, &d.bools, v != 0)
		}
		return b[n:], true
	case layout.Float64, layout.Float64Ptr:
		if typ != protowire.Fixed64Type {
			return nil, false
		}
		v, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return nil, false
		}
		store(f, base, &d.floats, math.Float64frombits(v))
		return b[n:], true
	default:
		if typ != protowire.BytesType {
			return nil, false
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, false
		}
		return b[n:], d.protoBytes(f, base, v, gather, depth)
	}
}

// protoBytes decodes a length-delimited value v of field f: a string, a message, an element of a
// list of messages, a packed list of doubles or of int32s, or an element of a list of strings.
func (d *decoder) protoBytes(f *fieldPlan, base layout.Ptr, v []byte, gather *protoList, depth int) bool {
	switch f.kind {
	case layout.String, layout.StringPtr:
		if !utf8.Valid(v) {
			return false
		}
		store(f, base, &d.strs, string(v))
		return true
	case layout.Message:
		sub := layout.New(f.sub.st)
		*layout.Field[layout.Ptr](base, f.offset) = sub
		return d.protoMessage(f.sub, sub, v, depth+1)
	case layout.Messages:
		e := gather.chunks.next(f.sub)
		d.ptrs = append(d.ptrs, e)
		return d.protoMessage(f.sub, e, v, depth+1)
	case layout.Float64s:
		if len(v)%8 != 0 {
			return false
		}
		out := layout.Field[[]float64](base, f.offset)
		for ; len(v) > 0; v = v[8:] {
			x, _ := protowire.ConsumeFixed64(v)
			*out = append(*out, math.Float64frombits(x))
		}
		return true
	case layout.Int32s: // the growth path's percentiles, packed as protobuf-go writes them
		out := layout.Field[[]int32](base, f.offset)
		for len(v) > 0 {
			x, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return false
			}
			*out = append(*out, int32(x)) // protobuf-go keeps the low 32 bits, as here
			v = v[n:]
		}
		return true
	case layout.Strings: // the adaptive path's pool and exclude
		if !utf8.Valid(v) {
			return false
		}
		out := layout.Field[[]string](base, f.offset)
		*out = append(*out, string(v))
		return true
	default:
		return false // lists of 64-bit numbers or bools: none in the contract, so untested here
	}
}
