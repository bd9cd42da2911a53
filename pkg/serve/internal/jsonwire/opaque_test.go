package jsonwire

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/testdata/opaque/forecastv1"
	opaquescoring "github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/testdata/opaque/scoringv1"
)

// The Opaque-API build of the contract (testdata/opaque, made by its generate.sh from the
// contract's .proto files) is the struct shape protobuf-go generates by default from edition 2024:
// hidden fields, optional scalars held as values with a presence bitmap. Writing those structs at
// open-API offsets decoded ScoreScaleRequest to {} with no error; these tests hold the codec to
// failing closed on them.

// opaqueTypes are the contract's message types of the scoring and forecast services (the token
// service's two are not copied), each with its Opaque-API twin.
func opaqueTypes(t testing.TB) (open, opaque []protoreflect.MessageType) {
	t.Helper()
	for _, mt := range contractMessages(t) {
		name := mt.Descriptor().FullName()
		if strings.HasPrefix(string(name), "yardstick.auth.") {
			continue
		}
		twin, err := protoregistry.GlobalTypes.FindMessageByName("opaque." + name)
		if err != nil {
			t.Fatalf("%s has no Opaque-API twin: run make generate", name)
		}
		open, opaque = append(open, mt), append(opaque, twin)
	}
	return open, opaque
}

// TestOpaqueScoreScaleRequest is the case, field by field: every optional field arrives.
func TestOpaqueScoreScaleRequest(t *testing.T) {
	t.Parallel()
	var m opaquescoring.ScoreScaleRequest
	body := `{"linkId":"STATE-READ-2026","scaleScore":"512.5","scaleSem":5,"grade":0,"timeOfYear":"BOY"}`
	if err := New(Options{}).Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if !m.HasLinkId() || m.GetLinkId() != "STATE-READ-2026" || m.GetScaleScore() != "512.5" ||
		!m.HasScaleSem() || m.GetScaleSem() != 5 || !m.HasGrade() || m.GetGrade() != 0 || m.GetTimeOfYear() != "BOY" {
		t.Errorf("got %v; want every field of %s", &m, body)
	}
}

// TestOpaqueDecodesAsOpen: on random bodies of every contract type — valid, and mutated into
// invalid ones — the codec gives an Opaque-API message exactly the answers it gives the open-API
// one through its generated codec: the same problems, or the same message, which is also protojson's.
func TestOpaqueDecodesAsOpen(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(21, 22))
	types, twins := opaqueTypes(t)
	accepted, refused := 0, 0
	for i := 0; i < 3000; i++ {
		mt, twin := types[i%len(types)], twins[i%len(types)]
		m := mt.New()
		fill(r, m, 0)
		valid := protojsonBytes(t, m.Interface())
		for _, body := range [][]byte{valid, mutateJSON(r, valid)} {
			open, opaque := mt.New().Interface(), twin.New().Interface()
			errOpen, errOpaque := c.Unmarshal(body, open), c.Unmarshal(body, opaque)
			if errString(errOpen) != errString(errOpaque) {
				t.Fatalf("%s from %s:\nopaque error %v\nopen error   %v", twin.Descriptor().FullName(), body, errOpaque, errOpen)
			}
			if errOpen != nil {
				refused++
				continue
			}
			accepted++
			got, want := protojsonBytes(t, opaque), protojsonBytes(t, open)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s from %s:\nopaque %s\nopen   %s", twin.Descriptor().FullName(), body, got, want)
			}
			ref := twin.New().Interface()
			if err := protojson.Unmarshal(body, ref); err == nil && !bytes.Equal(protojsonBytes(t, ref), got) {
				t.Fatalf("%s from %s:\ngot      %s\nprotojson %s", twin.Descriptor().FullName(), body, got, protojsonBytes(t, ref))
			}
		}
	}
	if accepted < 3000 || refused < 1000 {
		t.Errorf("%d bodies accepted, %d refused; want both kinds compared", accepted, refused)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// mutateJSON makes an invalid or different body from a valid one: a byte changed, cut short, a
// key renamed, a value of another type, a field given twice.
func mutateJSON(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	switch r.IntN(5) {
	case 0:
		if len(out) > 0 {
			const junk = `{}[]":,0123456789.e-tfnaxq\ `
			out[r.IntN(len(out))] = junk[r.IntN(len(junk))]
		}
	case 1:
		out = out[:r.IntN(len(out)+1)]
	case 2:
		out = bytes.Replace(out, []byte(`":`), []byte(`x":`), 1)
	case 3:
		for _, v := range []string{`"text"`, `2.5`, `true`, `[]`, `{}`, `null`, `-1`, `"1e3"`} {
			if i := bytes.IndexByte(out, ':'); i >= 0 && r.IntN(2) == 0 {
				end := i + 1 + valueEnd(out[i+1:])
				out = append(append(append([]byte{}, out[:i+1]...), v...), out[end:]...)
				break
			}
		}
	default:
		if i := bytes.IndexByte(out, ','); i > 0 && out[0] == '{' && strings.HasPrefix(string(out), `{"`) {
			out = append(append(append([]byte{}, out[:i]...), ','), out[1:]...) // {"a":1,"a":1,...
		}
	}
	return out
}

// valueEnd is the length of the JSON value at the start of b (a scalar: up to the next , or }).
func valueEnd(b []byte) int {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth == 0 {
				return i
			}
			depth--
		case c == ',' && depth == 0:
			return i
		}
	}
	return len(b)
}
