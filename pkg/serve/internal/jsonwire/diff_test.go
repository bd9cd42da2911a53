package jsonwire

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	_ "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// contractMessages are every message type of the contract, by full name (the fuzz targets pick
// one by its index).
func contractMessages(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	// The JSON front's messages: those of the unary rpcs, and every message they hold. The batch
	// streams' records and answers travel over gRPC only.
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] || !strings.HasPrefix(string(md.FullName()), "yardstick.") {
			return
		}
		seen[md.FullName()] = true
		for i := range md.Fields().Len() {
			if f := md.Fields().Get(i); f.Message() != nil {
				walk(f.Message())
			}
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				if m := methods.Get(j); !m.IsStreamingClient() && !m.IsStreamingServer() {
					walk(m.Input())
					walk(m.Output())
				}
			}
		}
		return true
	})
	var out []protoreflect.MessageType
	for name := range seen {
		if d, _ := protoregistry.GlobalFiles.FindDescriptorByName(name); d != nil && d.(protoreflect.MessageDescriptor).IsMapEntry() {
			continue // a map's entries are no message of their own
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, mt)
	}
	slices.SortFunc(out, func(a, b protoreflect.MessageType) int {
		return strings.Compare(string(a.Descriptor().FullName()), string(b.Descriptor().FullName()))
	})
	if len(out) < 28 {
		t.Fatalf("found %d contract messages; want every request and answer type", len(out))
	}
	return out
}

// protojsonBytes is what the JSON front answered before jsonwire: protojson with EmitUnpopulated,
// white space removed.
func protojsonBytes(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

var (
	awkwardFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 695.3, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e13, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 1.0 / 3, 2.5, -2.5, 1e100}
	awkwardStrings = []string{"", "lexile", "BR150L", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f", "<html>&amp;</html>",
		"é ü 漢字 😀", "\u2028\u2029", "\ufffd replacement", "/slash/"}
)

// negativeZero is protojson's -0 as a whole JSON value (not -0.5 or -0e1).
var negativeZero = regexp.MustCompile(`([:\[,])-0([,\]}])`)

// positiveZero rewrites every -0 value of a compact JSON document as 0.
func positiveZero(b []byte) []byte {
	for negativeZero.Match(b) { // [-0,-0] shares a comma between two matches: repeat
		b = negativeZero.ReplaceAll(b, []byte("${1}0${2}"))
	}
	return b
}

func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(3) {
	case 0:
		return awkwardFloats[r.IntN(len(awkwardFloats))]
	case 1:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	}
	return math.Float64frombits(r.Uint64()) // any bit pattern, NaN payloads included
}

func randomString(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return awkwardStrings[r.IntN(len(awkwardStrings))]
	}
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		switch r.IntN(4) {
		case 0:
			b.WriteByte(byte(r.IntN(0x80)))
		case 1:
			b.WriteRune(rune(0x80 + r.IntN(0x800)))
		default:
			b.WriteRune(rune(0x20 + r.IntN(0x5f)))
		}
	}
	return b.String()
}

func randomScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(randomString(r))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.Int32Kind:
		switch r.IntN(4) {
		case 0:
			return protoreflect.ValueOfInt32([]int32{0, 1, -1, math.MaxInt32, math.MinInt32}[r.IntN(5)])
		}
		return protoreflect.ValueOfInt32(int32(r.Uint32()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(randomFloat(r))
	}
	panic("contract field kind without a generator: " + fd.Kind().String())
}

// fill sets a random subset of m's fields to random values.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if r.IntN(5) == 0 {
			continue // unset
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for n := r.IntN(4); n > 0; n-- {
				mp.Set(randomScalar(r, fd.MapKey()).MapKey(), randomScalar(r, fd.MapValue()))
			}
		case fd.IsList():
			list := m.Mutable(fd).List()
			for n := r.IntN(5); n > 0; n-- {
				if fd.Message() != nil {
					e := list.NewElement()
					fill(r, e.Message(), depth+1)
					list.Append(e)
				} else {
					list.Append(randomScalar(r, fd))
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

// TestMarshalMatchesProtojson: on 12,000 random messages of every contract type — awkward numbers
// (exponent boundaries, −0, NaN, ±Inf, subnormals), awkward text (quotes, controls, non-ASCII),
// unset optional and message fields, empty and long lists — the encoder writes exactly the bytes
// the front wrote before it: protojson with EmitUnpopulated, white space removed; except that
// protojson's -0 is written 0 (issue 19).
func TestMarshalMatchesProtojson(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(1, 2))
	types := contractMessages(t)
	const n = 12000
	for i := 0; i < n; i++ {
		mt := types[i%len(types)]
		m := mt.New()
		fill(r, m, 0)
		want := positiveZero(protojsonBytes(t, m.Interface()))
		got, err := c.Marshal(nil, m.Interface())
		if err != nil {
			t.Fatalf("%s: %v", mt.Descriptor().FullName(), err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("message %d (%s):\ngot  %s\nwant %s", i, mt.Descriptor().FullName(), got, want)
		}
	}
}

// TestUnmarshalMatchesProtojson: what protojson reads from a valid body, the decoder reads too
// (the wire rules only refuse what protojson would have dropped or misread).
func TestUnmarshalMatchesProtojson(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(3, 4))
	types := contractMessages(t)
	for i := 0; i < 5000; i++ {
		mt := types[i%len(types)]
		m := mt.New()
		fill(r, m, 0)
		body := protojsonBytes(t, m.Interface())
		want := mt.New().Interface()
		if err := protojson.Unmarshal(body, want); err != nil {
			t.Fatal(err)
		}
		got := mt.New().Interface()
		if err := c.Unmarshal(body, got); err != nil {
			t.Fatalf("%s %s: %v", mt.Descriptor().FullName(), body, err)
		}
		// Compare by protojson's bytes: proto.Equal calls NaN unequal to itself.
		if a, b := protojsonBytes(t, got), protojsonBytes(t, want); !bytes.Equal(a, b) {
			t.Fatalf("%s from %s:\ngot  %s\nwant %s", mt.Descriptor().FullName(), body, a, b)
		}
	}
}

func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	types := contractMessages(t)
	for _, mt := range types {
		fields := mt.Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if fd.Kind() != protoreflect.StringKind || fd.IsList() {
				continue
			}
			m := mt.New()
			m.Set(fd, protoreflect.ValueOfString("bad \xff byte"))
			if _, err := c.Marshal(nil, m.Interface()); err == nil {
				t.Errorf("%s.%s with invalid UTF-8: got no error; want one (protojson refuses it too)", mt.Descriptor().FullName(), fd.Name())
			}
			return
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestReflectPathMatchesProtojson: messages without a generated struct (dynamicpb) take the
// protoreflect path; on the same random bodies it reads what protojson reads, and writes what
// protojson writes (-0 as 0).
func TestReflectPathMatchesProtojson(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(7, 8))
	types := contractMessages(t)
	for i := 0; i < 2000; i++ {
		mt := types[i%len(types)]
		m := mt.New()
		fill(r, m, 0)
		body := protojsonBytes(t, m.Interface())
		got := dynamicpb.NewMessage(mt.Descriptor())
		if err := c.Unmarshal(body, got); err != nil {
			t.Fatalf("%s %s: %v", mt.Descriptor().FullName(), body, err)
		}
		if a := protojsonBytes(t, got); !bytes.Equal(a, body) {
			t.Fatalf("%s read through protoreflect:\ngot  %s\nwant %s", mt.Descriptor().FullName(), a, body)
		}
		out, err := c.Marshal(nil, got)
		if err != nil || !bytes.Equal(out, positiveZero(body)) {
			t.Fatalf("%s written through protoreflect: %v\ngot  %s\nwant %s", mt.Descriptor().FullName(), err, out, body)
		}
	}
}

// TestNoNegativeZero: a double field holding -0 is written 0 (issue 19: an answer carried
// "ability":-0), alone and in a list; other values near zero keep their sign.
func TestNoNegativeZero(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct {
		name string
		m    proto.Message
		want string
	}{
		{"-0", &forecastv1.Forecast{Ability: negZero}, `"ability":0,`},
		{"+0", &forecastv1.Forecast{Ability: 0}, `"ability":0,`},
		{"smallest negative", &forecastv1.Forecast{Ability: -math.SmallestNonzeroFloat64}, `"ability":-5e-324,`},
		{"-0 in a list", &forecastv1.Forecast{Probabilities: []float64{negZero, negZero, -0.5}}, `"probabilities":[0,0,-0.5]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.Marshal(nil, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), tc.want) || strings.Contains(string(got), "-0,") || strings.Contains(string(got), "-0]") {
				t.Errorf("got %s; want it to hold %s and no -0", got, tc.want)
			}
		})
	}
}

// TestSixtyFourBitRange: a 64-bit whole number written with a fraction or an exponent is read
// exactly, not through a float64 (which rounds 2^63-1 up to 2^63 and wrapped it to -2^63), and
// refused past either end of its range as protojson refuses it; both sides of each edge, on an
// int64 field of the contract (GroupStreamResult.students) and on a uint64 one.
func TestSixtyFourBitRange(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	const int64Range = "students: must be a whole number from -9223372036854775808 to 9223372036854775807, got "
	for _, tc := range []struct{ body, want string }{
		{"9223372036854775807", "9223372036854775807"},
		{"9223372036854775807.0", "9223372036854775807"},
		{"9.223372036854775807e18", "9223372036854775807"},
		{`"9223372036854775807.0"`, "9223372036854775807"},
		{"9223372036854775808", ""},
		{"9223372036854775808.0", ""},
		{"9.223372036854775808e18", ""},
		{`"9223372036854775808.0"`, ""},
		{"-9223372036854775808.0", "-9223372036854775808"},
		{"-9.223372036854775808e18", "-9223372036854775808"},
		{"-9223372036854775809.0", ""},
		{"-9.223372036854775809e18", ""},
		{"9007199254740993.0", "9007199254740993"}, // 2^53+1: no float64 holds it
		{"1e19", ""},
		{"1e20", ""},
	} {
		t.Run(tc.body, func(t *testing.T) {
			t.Parallel()
			body := []byte(`{"students":` + tc.body + `}`)
			got := new(forecastv1.GroupStreamResult)
			err := c.Unmarshal(body, got)
			ref := new(forecastv1.GroupStreamResult)
			refErr := protojson.Unmarshal(body, ref)
			if tc.want == "" {
				if err == nil || refErr == nil || err.Error() != int64Range+strings.Trim(tc.body, `"`) {
					t.Errorf("got %v, %d (protojson: %v); want %q", err, got.GetStudents(), refErr, int64Range+strings.Trim(tc.body, `"`))
				}
				return
			}
			if err != nil || refErr != nil || strconv.FormatInt(got.GetStudents(), 10) != tc.want || ref.GetStudents() != got.GetStudents() {
				t.Errorf("got %d, %v (protojson: %d, %v); want %s", got.GetStudents(), err, ref.GetStudents(), refErr, tc.want)
			}
		})
	}
	// uint64 fields take 0 to 2^63-1 (larger values are not used by this contract).
	const uint64Range = "value: must be a whole number from 0 to 9223372036854775807, got "
	for _, tc := range []struct{ body, want string }{
		{"9223372036854775807.0", "9223372036854775807"},
		{"9.223372036854775807e18", "9223372036854775807"},
		{"9223372036854775808.0", ""},
		{"9.223372036854775808e18", ""},
		{"-0.0", "0"},
		{"-1.0", ""},
	} {
		t.Run("uint64 "+tc.body, func(t *testing.T) {
			t.Parallel()
			got := new(wrapperspb.UInt64Value)
			err := c.Unmarshal([]byte(`{"value":`+tc.body+`}`), got)
			if tc.want == "" {
				if err == nil || err.Error() != uint64Range+tc.body {
					t.Errorf("got %v, %d; want %q", err, got.GetValue(), uint64Range+tc.body)
				}
				return
			}
			if err != nil || strconv.FormatUint(got.GetValue(), 10) != tc.want {
				t.Errorf("got %d, %v; want %s", got.GetValue(), err, tc.want)
			}
		})
	}
}
