package jsoncodec

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// The readers' edges, on a message written here as the plugin writes one (the generated code's
// agreement with protobuf-go on every contract type is grpcguard's TestDecodeMatchesProtobufGo).

type wireSub struct{ v *float64 }

func (x *wireSub) DecodeProtoWire(d *ProtoDecoder, b []byte) error {
	for len(b) > 0 {
		num, typ, n := ProtoTag(b)
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
		switch num {
		case 1:
			x.v, n = d.OptDouble(b, typ)
		default:
			return ErrProtoWire
		}
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
	}
	return nil
}

var wireSubPool Pool[wireSub]

type wireMsg struct {
	name    string
	doubles []float64
	int32s  []int32
	shares  map[string]float64
	count   *int64
	subs    []*wireSub
	last    string // field 16: a two-byte tag
}

func (x *wireMsg) DecodeProtoWire(d *ProtoDecoder, b []byte) error {
	for len(b) > 0 {
		num, typ, n := ProtoTag(b)
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
		switch num {
		case 1:
			x.name, n = d.String(b, typ)
		case 2:
			x.doubles, n = d.Doubles(x.doubles, b, typ)
		case 3:
			x.int32s, n = d.Int32s(x.int32s, b, typ)
		case 4:
			n = ProtoMap(d, &x.shares, b, typ, (*ProtoDecoder).Double)
		case 5:
			x.count, n = d.OptInt64(b, typ)
		case 6:
			x.subs, n = ProtoMessages[wireSub, *wireSub](d, x.subs, b, num, typ, &wireSubPool)
		case 16:
			x.last, n = d.String(b, typ)
		default:
			return ErrProtoWire
		}
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
	}
	return nil
}

func TestProtoReaders(t *testing.T) {
	t.Parallel()
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(tag(num, protowire.BytesType), s)
	}
	dbl := func(num protowire.Number, v float64) []byte {
		return protowire.AppendFixed64(tag(num, protowire.Fixed64Type), math.Float64bits(v))
	}
	packed := func(num protowire.Number, vs ...float64) []byte {
		var p []byte
		for _, v := range vs {
			p = protowire.AppendFixed64(p, math.Float64bits(v))
		}
		return protowire.AppendBytes(tag(num, protowire.BytesType), p)
	}
	vint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(num, protowire.VarintType), v)
	}
	entry := func(key string, v float64) []byte {
		return protowire.AppendBytes(tag(4, protowire.BytesType), cat(str(1, key), dbl(2, v)))
	}
	sub := func(v float64) []byte { return protowire.AppendBytes(tag(6, protowire.BytesType), dbl(1, v)) }
	many := make([]float64, 4097) // past the arena's largest shared slice
	for i := range many {
		many[i] = float64(i)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want wireMsg // compared field by field; count and subs by value
		ok   bool
	}{
		{"empty", nil, wireMsg{}, true},
		{"a string of 127 bytes (one-byte length)", str(1, strings.Repeat("a", 127)), wireMsg{name: strings.Repeat("a", 127)}, true},
		{"a string of 128 bytes (two-byte length)", str(1, strings.Repeat("b", 128)), wireMsg{name: strings.Repeat("b", 128)}, true},
		{"the last value wins", cat(str(1, "a"), str(1, "b"), vint(5, 1), vint(5, 2)), wireMsg{name: "b", count: ptr(int64(2))}, true},
		{"field 16: a two-byte tag", str(16, "x"), wireMsg{last: "x"}, true},
		{"doubles packed, then one by one", cat(packed(2, 1, 2), dbl(2, 3)), wireMsg{doubles: []float64{1, 2, 3}}, true},
		{"4,096 doubles packed", packed(2, many[:4096]...), wireMsg{doubles: many[:4096]}, true},
		{"4,097 doubles packed", packed(2, many...), wireMsg{doubles: many}, true},
		{"int32s packed and one by one, truncated as protobuf-go", cat(protowire.AppendBytes(tag(3, protowire.BytesType),
			protowire.AppendVarint(protowire.AppendVarint(nil, 1<<32+5), uint64(1<<64-1))), vint(3, 7)),
			wireMsg{int32s: []int32{5, -1, 7}}, true},
		{"a map key given twice keeps its last value", cat(entry("a", 1), entry("b", 2), entry("a", 3)),
			wireMsg{shares: map[string]float64{"a": 3, "b": 2}}, true},
		{"a map entry without its key or value", cat(protowire.AppendBytes(tag(4, protowire.BytesType), nil)),
			wireMsg{shares: map[string]float64{"": 0}}, true},
		{"a list of messages split by another field", cat(sub(1), sub(2), str(1, "n"), sub(3)),
			wireMsg{name: "n", subs: []*wireSub{{ptr(1.0)}, {ptr(2.0)}, {ptr(3.0)}}}, true},
		{"field number 0", []byte{0x00, 0x01}, wireMsg{}, false},
		{"a field it does not know", vint(7, 1), wireMsg{}, false},
		{"a double as a varint", vint(2, 1), wireMsg{}, false},
		{"a string as a varint", vint(1, 1), wireMsg{}, false},
		{"packed doubles not a multiple of 8", protowire.AppendBytes(tag(2, protowire.BytesType), []byte{1, 2, 3}), wireMsg{}, false},
		{"a length past the end", []byte{0x0a, 0x05, 'x'}, wireMsg{}, false},
		{"a double cut short", cat(tag(2, protowire.Fixed64Type), []byte{1, 2}), wireMsg{}, false},
		{"an unknown field in a list element", protowire.AppendBytes(tag(6, protowire.BytesType), vint(2, 1)), wireMsg{}, false},
		{"a string of every UTF-8 length", str(1, "aé€😀"), wireMsg{name: "aé€😀"}, true},
		{"a string not UTF-8", protowire.AppendBytes(tag(1, protowire.BytesType), []byte{'a', 0xff}), wireMsg{}, false},
		{"a string cut inside a character", protowire.AppendBytes(tag(1, protowire.BytesType), []byte("é")[:1]), wireMsg{}, false},
		{"a map key not UTF-8", protowire.AppendBytes(tag(4, protowire.BytesType), protowire.AppendBytes(tag(1, protowire.BytesType), []byte{0xc0, 0x80})), wireMsg{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got wireMsg
			err := DecodeProto(&got, tc.b)
			if (err == nil) != tc.ok {
				t.Fatalf("got error %v; want ok %v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			if got.name != tc.want.name || got.last != tc.want.last || !reflect.DeepEqual(got.doubles, tc.want.doubles) ||
				!reflect.DeepEqual(got.int32s, tc.want.int32s) || !reflect.DeepEqual(got.shares, tc.want.shares) ||
				!reflect.DeepEqual(got.count, tc.want.count) || !reflect.DeepEqual(got.subs, tc.want.subs) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestProtoArenaSlicesDoNotOverlap: a packed list taken from the arena and appended to after
// another list was taken beside it copies itself out; the other list is untouched.
func TestProtoArenaSlicesDoNotOverlap(t *testing.T) {
	t.Parallel()
	d := &ProtoDecoder{}
	p := protowire.AppendBytes(nil, protowire.AppendFixed64(protowire.AppendFixed64(nil, math.Float64bits(1)), math.Float64bits(2)))
	first, n := d.Doubles(nil, p, protowire.BytesType)
	second, m := d.Doubles(nil, p, protowire.BytesType)
	if n != len(p) || m != len(p) {
		t.Fatalf("lengths: got %d, %d; want %d", n, m, len(p))
	}
	first, _ = d.Doubles(first, protowire.AppendFixed64(nil, math.Float64bits(9)), protowire.Fixed64Type)
	if !reflect.DeepEqual(first, []float64{1, 2, 9}) || !reflect.DeepEqual(second, []float64{1, 2}) {
		t.Errorf("got %v and %v; want [1 2 9] and [1 2]", first, second)
	}
}

// TestProtoStringsOutliveTheBytes: decoded strings are copies: the caller may reuse the bytes.
func TestProtoStringsOutliveTheBytes(t *testing.T) {
	t.Parallel()
	b := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "lexile")
	var m wireMsg
	if err := DecodeProto(&m, b); err != nil {
		t.Fatal(err)
	}
	clear(b)
	if m.name != "lexile" {
		t.Errorf("got %q; want %q", m.name, "lexile")
	}
}

func ptr[T any](v T) *T { return &v }

// wireTree holds itself: a child (1) and children (2).
type wireTree struct {
	child    *wireTree
	children []*wireTree
}

var wireTreePool Pool[wireTree]

func (x *wireTree) DecodeProtoWire(d *ProtoDecoder, b []byte) error {
	for len(b) > 0 {
		num, typ, n := ProtoTag(b)
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
		switch num {
		case 1:
			if x.child == nil {
				x.child = new(wireTree)
			}
			n = d.Message(x.child, b, typ)
		case 2:
			x.children, n = ProtoMessages[wireTree, *wireTree](d, x.children, b, num, typ, &wireTreePool)
		default:
			return ErrProtoWire
		}
		if n < 0 {
			return ErrProtoWire
		}
		b = b[n:]
	}
	return nil
}

// TestProtoDepth: messages nested MaxProtoDepth (100) deep are read, one deeper refused, through
// a message field and a list of them; a refusal deep down leaves the pooled decoder at depth 0.
func TestProtoDepth(t *testing.T) {
	t.Parallel()
	if MaxProtoDepth != 100 {
		t.Fatalf("MaxProtoDepth: got %d; want 100", MaxProtoDepth)
	}
	nest := func(depth int, num protowire.Number) []byte {
		var b []byte
		for range depth {
			b = protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"a child at 100", nest(100, 1), true},
		{"a child at 101", nest(101, 1), false},
		{"a list's element at 100", nest(100, 2), true},
		{"a list's element at 101", nest(101, 2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := DecodeProto(new(wireTree), tc.b); (err == nil) != tc.ok {
				t.Errorf("got error %v; want ok %v", err, tc.ok)
			}
		})
	}
	t.Run("a refusal resets the depth", func(t *testing.T) {
		t.Parallel()
		d := &ProtoDecoder{}
		if err := new(wireTree).DecodeProtoWire(d, nest(101, 1)); err == nil || d.depth != 0 {
			t.Errorf("got error %v and depth %d; want ErrProtoWire and 0", err, d.depth)
		}
	})
}
