package jsonwire

import (
	"math"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The gRPC door decodes its messages with the same layouts. protobuf-go's Unmarshal allocates
// each list element and each optional scalar on its own (a 40-item request: ≈ 90 allocations,
// about a tenth of the call's CPU); UnmarshalProto writes the generated structs at their offsets,
// taking elements from the decoder's chunks and optional scalars from arenas, as the JSON decoder
// does.
//
// It decodes only what a protobuf encoder writes for these messages in the usual way, and
// declines everything else — lists of strings or whole numbers (the contract has none), an unknown field, a wire type other than the field's, a list split
// by other fields, an unpacked number list, a message field given twice, a string that is not
// UTF-8, nesting deeper than maxProtoDepth — so that protobuf-go, which knows every case, decodes
// those. A differential test holds the two to the same messages.

// maxProtoDepth bounds the nesting the fast path follows (the contract's messages nest 3 deep).
const maxProtoDepth = 32

// UnmarshalProto decodes the protobuf encoding b into m, which it resets, as proto.Unmarshal
// would. It returns false when b holds something it leaves to proto.Unmarshal; m is then in an
// unspecified state, and the caller resets it and calls proto.Unmarshal. Strings are copied: b
// may be reused afterwards.
func (c *Codec) UnmarshalProto(b []byte, m proto.Message) bool {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if !p.fast || p.byNumber == nil || reflect.TypeOf(m) != p.ptrType {
		return false
	}
	proto.Reset(m)
	d := decoders.Get().(*decoder) // the JSON decoder's arenas and element stack serve here too
	defer d.release()
	return d.protoMessage(p, reflect.ValueOf(m).UnsafePointer(), b, 0)
}

// protoList is a message list being gathered: its elements are on the decoder's stack from start.
type protoList struct {
	f      *fieldPlan
	start  int
	chunks *elements
}

func (d *decoder) protoMessage(p *plan, base unsafe.Pointer, b []byte, depth int) bool {
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
		if open != nil && open != f {
			if open.goKind == goMessages {
				d.storeList(unsafe.Add(base, open.offset), open.sub, gather.start)
			}
			open = nil
		}
		if seen&f.bit != 0 && f.list && open != f {
			return false // a list split by other fields
		}
		if f.list && open != f {
			open = f
			if f.goKind == goMessages {
				gather = protoList{f: f, start: len(d.ptrs), chunks: d.elementsOf(f.sub)}
			}
		}
		if seen&f.bit != 0 && f.goKind == goMessage {
			return false // a message field given twice is merged: left to protobuf-go
		}
		seen |= f.bit
		ptr := unsafe.Add(base, f.offset)
		switch f.goKind {
		case goInt32, goPtrInt32, goBool, goPtrBool:
			if typ != protowire.VarintType {
				return false
			}
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false
			}
			b = b[n:]
			switch f.goKind {
			case goInt32:
				*(*int32)(ptr) = int32(v)
			case goPtrInt32:
				*(**int32)(ptr) = d.ints.put(int32(v))
			case goBool:
				*(*bool)(ptr) = v != 0
			default:
				*(**bool)(ptr) = d.bools.put(v != 0)
			}
		case goFloat64, goPtrFloat64:
			if typ != protowire.Fixed64Type {
				return false
			}
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return false
			}
			b = b[n:]
			if f.goKind == goFloat64 {
				*(*float64)(ptr) = math.Float64frombits(v)
			} else {
				*(**float64)(ptr) = d.floats.put(math.Float64frombits(v))
			}
		default:
			if typ != protowire.BytesType {
				return false
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return false
			}
			b = b[n:]
			switch f.goKind {
			case goString, goPtrString:
				if !utf8.Valid(v) {
					return false
				}
				if f.goKind == goString {
					*(*string)(ptr) = string(v)
				} else {
					*(**string)(ptr) = d.strs.put(string(v))
				}
			case goMessage:
				sub := reflect.New(f.sub.goType).UnsafePointer()
				*(*unsafe.Pointer)(ptr) = sub
				if !d.protoMessage(f.sub, sub, v, depth+1) {
					return false
				}
			case goMessages:
				if !d.protoElement(&gather, v, depth) {
					return false
				}
			case goFloat64s:
				if len(v)%8 != 0 {
					return false
				}
				out := (*[]float64)(ptr)
				for ; len(v) > 0; v = v[8:] {
					x, _ := protowire.ConsumeFixed64(v)
					*out = append(*out, math.Float64frombits(x))
				}
			case goStrings: // the adaptive path's pool and exclude
				if !utf8.Valid(v) {
					return false
				}
				out := (*[]string)(ptr)
				*out = append(*out, string(v))
			default:
				return false // lists of whole numbers: none in the contract, so untested here
			}
		}
	}
	if open != nil && open.goKind == goMessages {
		d.storeList(unsafe.Add(base, open.offset), open.sub, gather.start)
	}
	return true
}

// protoElement decodes one element of the list l from b.
func (d *decoder) protoElement(l *protoList, b []byte, depth int) bool {
	e := l.chunks.next(l.f.sub)
	d.ptrs = append(d.ptrs, e)
	return d.protoMessage(l.f.sub, e, b, depth+1)
}
