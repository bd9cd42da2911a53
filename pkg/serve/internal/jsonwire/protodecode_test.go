package jsonwire

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// sameAsProtobuf checks the fast decoder's one promise: whenever it takes b, proto.Unmarshal takes
// b too and makes the same message (compared by deterministic encoding, which keeps NaN payloads
// and unknown fields; proto.Equal calls NaN unequal to itself).
func sameAsProtobuf(t *testing.T, c *Codec, b []byte, newMsg func() proto.Message, what string) bool {
	t.Helper()
	got := newMsg()
	if !c.TryUnmarshalProtobuf(b, got) {
		return false
	}
	want := newMsg()
	if err := proto.Unmarshal(b, want); err != nil {
		t.Fatalf("%s: the fast decoder took bytes protobuf-go refuses (%v): % x", what, err, b)
	}
	det := proto.MarshalOptions{Deterministic: true}
	gb, err1 := det.Marshal(got)
	wb, err2 := det.Marshal(want)
	if err1 != nil || err2 != nil || !bytes.Equal(gb, wb) {
		t.Fatalf("%s: from % x\ngot  %v\nwant %v", what, b, got, want)
	}
	return true
}

// TestProtobufPathMatchesProtobuf: on 10,000 random messages of every contract type, encoded as
// protobuf-go encodes them, the fast decoder decodes every one of the types it serves and makes
// exactly protobuf-go's message; and on the same bytes mutated — an unknown field appended, a
// field given twice, two encodings concatenated (protobuf's merge), truncated, a byte changed — it
// either declines or agrees with protobuf-go.
func TestProtobufPathMatchesProtobuf(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(11, 12))
	types := contractMessages(t)
	taken, fastTypes := map[string]int{}, 0
	for _, mt := range types {
		if p := c.planOf(mt.Descriptor()); p.fast && p.byNumber != nil {
			fastTypes++
		}
	}
	if fastTypes < len(types)-2 {
		t.Fatalf("%d of %d contract types have a fast layout; want nearly all", fastTypes, len(types))
	}
	for i := 0; i < 10000; i++ {
		mt := types[i%len(types)]
		newMsg := func() proto.Message { return mt.New().Interface() }
		m := mt.New()
		fill(r, m, 0)
		b, err := proto.Marshal(m.Interface())
		if err != nil {
			t.Fatal(err)
		}
		name := string(mt.Descriptor().FullName())
		p := c.planOf(mt.Descriptor())
		if ok := sameAsProtobuf(t, c, b, newMsg, name+" as encoded"); ok != (p.fast && p.byNumber != nil) {
			t.Fatalf("%s as protobuf-go encodes it: fast path taken = %v; want %v", name, ok, p.fast)
		}

		other := mt.New()
		fill(r, other, 0)
		ob, _ := proto.Marshal(other.Interface())
		mutations := map[string][]byte{
			"unknown field":  protowire.AppendVarint(protowire.AppendTag(bytes.Clone(b), 999, protowire.VarintType), 7),
			"concatenated":   append(bytes.Clone(b), ob...),
			"given twice":    append(bytes.Clone(b), b...),
			"truncated":      b[:r.IntN(len(b)+1)],
			"a byte changed": flip(r, b),
		}
		for kind, mb := range mutations {
			if sameAsProtobuf(t, c, mb, newMsg, name+" "+kind) {
				taken[kind]++
			}
		}
	}
	// The mutations that protobuf-go reads one way only must have been declined; the others taken
	// where they stay canonical (so the agreement above was tested, not skipped).
	if taken["unknown field"] != 0 {
		t.Errorf("unknown fields taken %d times; want 0 (protobuf-go keeps them for the unknown-field check)", taken["unknown field"])
	}
	if taken["truncated"] == 0 || taken["a byte changed"] == 0 || taken["concatenated"] == 0 {
		t.Errorf("mutated encodings taken: %v; want some of each kind but unknown fields", taken)
	}
}

func flip(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	if len(out) > 0 {
		out[r.IntN(len(out))] ^= byte(1 + r.IntN(255))
	}
	return out
}

// TestProtobufPathDeclinesNonCanonical: each layout the fast decoder leaves to protobuf-go,
// on the 40-item request's message.
func TestProtobufPathDeclinesNonCanonical(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	item := func(d float64) []byte {
		return protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), mathBits(d))
	}
	items := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = protowire.AppendBytes(protowire.AppendTag(out, 1, protowire.BytesType), b)
		}
		return out
	}
	correct := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 22)
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"canonical", append(items(item(500), item(510)), correct...), true},
		{"empty", nil, true},
		{"a list split by another field", append(append(items(item(500)), correct...), items(item(510))...), false},
		{"a wire type other than the field's", protowire.AppendFixed32(protowire.AppendTag(nil, 2, protowire.Fixed32Type), 22), false},
		{"an unknown field in an element", items(append(item(500), protowire.AppendVarint(protowire.AppendTag(nil, 15, protowire.VarintType), 1)...)), false},
		{"a length past the end", []byte{0x0a, 0x7f, 0x09}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			newMsg := func() proto.Message { return newDifficultiesRequest() }
			if got := sameAsProtobuf(t, c, tc.b, newMsg, tc.name); got != tc.want {
				t.Errorf("taken: got %v; want %v", got, tc.want)
			}
		})
	}
}

func mathBits(f float64) uint64 { return math.Float64bits(f) }

func newDifficultiesRequest() proto.Message { return &scoringv1.ScoreDifficultiesBayesRequest{} }

// BenchmarkProtobufDifficulties40 decodes make bench-e2e's gRPC request: the fast decoder
// against protobuf-go.
func BenchmarkProtobufDifficulties40(b *testing.B) {
	c := New(Options{})
	var req scoringv1.ScoreDifficultiesBayesRequest
	if err := c.Unmarshal(difficulties40(), &req); err != nil {
		b.Fatal(err)
	}
	wire, err := proto.Marshal(&req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var m scoringv1.ScoreDifficultiesBayesRequest
			if !c.TryUnmarshalProtobuf(wire, &m) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("protobuf-go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var m scoringv1.ScoreDifficultiesBayesRequest
			if err := proto.Unmarshal(wire, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
