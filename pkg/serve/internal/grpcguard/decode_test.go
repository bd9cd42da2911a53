package grpcguard

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1" // the token service's messages
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// The generated decoders' one promise: the guard decodes every message exactly as it did with
// protobuf-go alone (proto.Unmarshal, then the unknown-field walk), message for message and
// refusal for refusal.

// contractTypes are every message type of the contract (the yardstick.* files), requests,
// answers, records and what they hold.
func contractTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var types []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if d := mt.Descriptor(); strings.HasPrefix(string(d.FullName()), "yardstick.") && !d.IsMapEntry() {
			types = append(types, mt)
		}
		return true
	})
	if len(types) < 40 {
		t.Fatalf("%d contract message types; want the contract's (over 40)", len(types))
	}
	return types
}

// reference is what the guard made of b before the generated decoders: protobuf-go's message, or
// its refusal.
func reference(b []byte, mt protoreflect.MessageType) (proto.Message, error) {
	m := mt.New().Interface()
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, rpcerr.Invalid("", "the message is not valid protobuf: %v", err)
	}
	var p rpcerr.Problems
	walkUnknown(&p, "", m.ProtoReflect())
	if err := p.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// sameAsReference decodes b as a message of type mt through decode and reports whether a
// generated decoder took it; it fails t unless the answer is the reference's.
func sameAsReference(t *testing.T, b []byte, mt protoreflect.MessageType, what string) (generated bool) {
	t.Helper()
	return decodedBy(t, b, mt, what) != ""
}

// decodedBy is sameAsReference naming the decoder that took b: "own" (this repository's
// generated DecodeProtoWire), "vt" (vtprotobuf's UnmarshalVT), or "" (protobuf-go).
func decodedBy(t *testing.T, b []byte, mt protoreflect.MessageType, what string) string {
	t.Helper()
	w := wireMessage{data: received(b), read: true}
	got := mt.New().Interface()
	err := decode(&w, got, true)
	want, wantErr := reference(b, mt)
	switch {
	case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || err != nil && problemsOf(err) != problemsOf(wantErr):
		t.Fatalf("%s from % x:\ngot  %v (%s)\nwant %v (%s)", what, b, err, problemsOf(err), wantErr, problemsOf(wantErr))
	case err == nil && !sameMessage(got, want):
		t.Fatalf("%s from % x:\ngot  %v\nwant %v", what, b, got, want)
	}
	_, own := got.(jsoncodec.ProtoMessage)
	_, vt := got.(vtMessage)
	switch {
	case !wellFormed(mt.Descriptor(), b):
		return ""
	case own:
		return "own"
	case vt:
		return "vt"
	}
	return ""
}

// sameMessage compares by deterministic encoding, which keeps NaN payloads (proto.Equal calls NaN
// unequal to itself).
func sameMessage(a, b proto.Message) bool {
	det := proto.MarshalOptions{Deterministic: true}
	ab, err1 := det.Marshal(a)
	bb, err2 := det.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// TestDecodeMatchesProtobufGo: on 6,000 random messages of every contract type, as protobuf-go
// encodes them and with their lists of numbers one by one as other encoders may, the generated
// decoder decodes every one, exactly as protobuf-go; on the same bytes damaged (an unknown field
// added, a field of the wrong wire type, a string not UTF-8, another message appended, cut short, a
// byte changed) the guard answers as protobuf-go and the unknown-field walk did.
func TestDecodeMatchesProtobufGo(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 41))
	types := contractTypes(t)
	taken := map[string]int{}
	own := 0 // types the repository's own decoder took
	for i := range 6000 {
		mt := types[i%len(types)]
		m := mt.New()
		fill(r, m, 0)
		b, err := proto.Marshal(m.Interface())
		if err != nil {
			t.Fatal(err)
		}
		name := string(mt.Descriptor().FullName())
		by := decodedBy(t, b, mt, name+" as encoded")
		if by == "" {
			t.Fatalf("%s as protobuf-go encodes it (% x): left to protobuf-go; want the generated decoder", name, b)
		}
		if i < len(types) && by == "own" {
			own++
		}
		if !sameAsReference(t, unpack(t, b, mt.Descriptor()), mt, name+" unpacked") {
			t.Fatalf("%s with its lists one by one: left to protobuf-go; want the generated decoder", name)
		}
		other := mt.New()
		fill(r, other, 0)
		ob, _ := proto.Marshal(other.Interface())
		for kind, db := range map[string][]byte{
			"unknown field":    protowire.AppendVarint(protowire.AppendTag(bytes.Clone(b), 999, protowire.VarintType), 7),
			"wrong wire type":  protowire.AppendFixed32(protowire.AppendTag(bytes.Clone(b), 1, protowire.Fixed32Type), 7),
			"not UTF-8":        notUTF8(b, mt.Descriptor()),
			"concatenated":     append(bytes.Clone(b), ob...),
			"truncated":        b[:r.IntN(len(b)+1)],
			"a byte changed":   flip(r, b),
			"a nested unknown": nestedUnknown(b, mt.Descriptor()),
		} {
			if sameAsReference(t, db, mt, name+" "+kind) {
				taken[kind]++
			}
		}
	}
	// Damage protobuf-go reads another way is left to it; the rest is mostly still well formed,
	// so the agreement above was tested on both paths.
	for _, kind := range []string{"unknown field", "wrong wire type"} {
		if taken[kind] != 0 {
			t.Errorf("%s: taken by the generated decoder %d times; want 0", kind, taken[kind])
		}
	}
	// Every type with a codec of this repository's plugin (all but those holding a oneof or an
	// enum: vtprotobuf's) is decoded by it.
	if own < 60 {
		t.Errorf("types decoded by the repository's own generated decoder: got %d; want at least 60 of %d", own, len(types))
	}
	if taken["concatenated"] < 500 || taken["truncated"] == 0 || taken["a byte changed"] == 0 {
		t.Errorf("damaged encodings the generated decoder took: %v; want some of each kind it can read", taken)
	}
}

// unpack rewrites b, a message of type md as protobuf-go encodes it, with every packed list of
// numbers written one element at a time, at any depth.
func unpack(t *testing.T, b []byte, md protoreflect.MessageDescriptor) []byte {
	t.Helper()
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if n < 0 || m < 0 {
			t.Fatalf("malformed: % x", b)
		}
		field, value := b[:n+m], b[n:n+m]
		b = b[n+m:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			out = append(out, field...)
			continue
		}
		v, _ := protowire.ConsumeBytes(value)
		switch w := wireOf(fd); {
		case fd.IsList() && w != protowire.BytesType:
			for len(v) > 0 {
				k := protowire.ConsumeFieldValue(num, w, v)
				out = append(protowire.AppendTag(out, num, w), v[:k]...)
				v = v[k:]
			}
		case fd.Message() != nil && !fd.IsMap():
			out = protowire.AppendBytes(protowire.AppendTag(out, num, typ), unpack(t, v, fd.Message()))
		default:
			out = append(out, field...)
		}
	}
	return out
}

func wireOf(fd protoreflect.FieldDescriptor) protowire.Type {
	f, _ := fieldShapeOf(fd, map[protoreflect.FullName]*shape{})
	return f.wire
}

// notUTF8 is b with a string field that is not UTF-8 appended, if md has a string field.
func notUTF8(b []byte, md protoreflect.MessageDescriptor) []byte {
	for i := range md.Fields().Len() {
		if fd := md.Fields().Get(i); fd.Kind() == protoreflect.StringKind && !fd.IsMap() {
			return protowire.AppendBytes(protowire.AppendTag(bytes.Clone(b), fd.Number(), protowire.BytesType), []byte{'x', 0xff})
		}
	}
	return b
}

// nestedUnknown is b with a message field appended that holds an unknown field, if md has a
// message field (protobuf merges it into the one b may hold).
func nestedUnknown(b []byte, md protoreflect.MessageDescriptor) []byte {
	for i := range md.Fields().Len() {
		if fd := md.Fields().Get(i); fd.Message() != nil && !fd.IsMap() {
			inner := protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 1)
			return protowire.AppendBytes(protowire.AppendTag(bytes.Clone(b), fd.Number(), protowire.BytesType), inner)
		}
	}
	return b
}

func flip(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	if len(out) > 0 {
		out[r.IntN(len(out))] ^= byte(1 + r.IntN(255))
	}
	return out
}

// FuzzDecode: whatever the bytes, of whichever contract type, the guard answers as protobuf-go
// and the unknown-field walk did.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 60s ./pkg/serve/internal/grpcguard/
func FuzzDecode(f *testing.F) {
	types := contractTypes(f)
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 40 {
		m := types[i%len(types)].New()
		fill(r, m, 0)
		b, _ := proto.Marshal(m.Interface())
		f.Add(b, uint16(i%len(types)))
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint16) {
		sameAsReference(t, b, types[int(which)%len(types)], "fuzzed")
	})
}

// fill sets random values in m's fields, some left unset, messages to depth 4.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if r.IntN(5) == 0 || fd.ContainingOneof() != nil && r.IntN(2) == 0 {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for n := r.IntN(4); n > 0; n-- {
				mp.Set(randomScalar(r, fd.MapKey()).MapKey(), randomScalar(r, fd.MapValue()))
			}
		case fd.IsList():
			list := m.Mutable(fd).List()
			for n := r.IntN(6); n > 0; n-- {
				if fd.Message() == nil {
					list.Append(randomScalar(r, fd))
				} else if depth < 4 {
					e := list.NewElement()
					fill(r, e.Message(), depth+1)
					list.Append(e)
				}
			}
		case fd.Message() != nil:
			if depth < 4 {
				fill(r, m.Mutable(fd).Message(), depth+1)
			}
		default:
			m.Set(fd, randomScalar(r, fd))
		}
	}
}

// randomScalar is a random value of fd's kind, awkward numbers and text included.
func randomScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString([]string{"", "lexile", "é\"\\\n", strings.Repeat("x", r.IntN(200)), "L" + strconv.Itoa(r.IntN(1e6))}[r.IntN(5)])
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, 1, -1, math.MaxInt32, math.MinInt32, int32(r.Uint32())}[r.IntN(6)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(r.Uint64()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(r.Uint32())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(r.Uint64())
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(r.NormFloat64()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), 5e-324, r.NormFloat64() * 1e3}[r.IntN(6)])
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(strconv.Itoa(r.Int())))
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(r.IntN(3)))
	}
	panic("no random value for " + fd.Kind().String())
}

// vtOnly hides the repository's own decoder of the message it holds (its DecodeProtoWire is not
// jsoncodec's), so the guard decodes it with vtprotobuf's, as it did before: the reference the
// own decoder is measured against.
type vtOnly struct {
	*scoringv1.ScoreDifficultiesBayesRequest
}

func (vtOnly) DecodeProtoWire() {}

// BenchmarkDecodeDifficulties40 decodes make bench-e2e's gRPC request as the guard does (the
// repository's generated decoder, its checks in the same pass), as it did with vtprotobuf's
// generated decoder after the check, and with protobuf-go and the unknown-field walk it needed.
//
//	go test -run '^$' -bench DecodeDifficulties40 -count 6 ./pkg/serve/internal/grpcguard/
func BenchmarkDecodeDifficulties40(b *testing.B) {
	req := &scoringv1.ScoreDifficultiesBayesRequest{NumberCorrect: proto.Int32(22), Framework: proto.String("lexile"),
		PriorAbility: proto.Float64(700), PriorUncertainty: proto.Float64(70), ElapsedDays: proto.Float64(120)}
	for i := range 40 {
		req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: proto.Float64(float64(500 + 10*i))})
	}
	wire, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("guard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m scoringv1.ScoreDifficultiesBayesRequest
			w := wireMessage{data: mem.BufferSlice{mem.SliceBuffer(wire)}, read: true}
			if err := decode(&w, &m, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vtprotobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m scoringv1.ScoreDifficultiesBayesRequest
			w := wireMessage{data: mem.BufferSlice{mem.SliceBuffer(wire)}, read: true}
			if err := decode(&w, vtOnly{&m}, true); err != nil || len(m.Items) != 40 {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m scoringv1.ScoreDifficultiesBayesRequest
			if err := proto.Unmarshal(wire, &m); err != nil {
				b.Fatal(err)
			}
			var p rpcerr.Problems
			if walkUnknown(&p, "", m.ProtoReflect()); p.Err() != nil {
				b.Fatal(p.Err())
			}
		}
	})
}
