package jsonwire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// The fuzz targets run in make ci for a bounded time (make fuzz); their seeds are random messages
// of every contract type and the inputs kept in testdata/fuzz.
//
//	go test -run '^$' -fuzz FuzzUnmarshalJSON -fuzztime 60s ./pkg/serve/internal/jsonwire/

// fuzzType is the contract message type a fuzz input names by index, and its Opaque-API twin (nil
// for the token service's types, which have none).
func fuzzType(t testing.TB, types []protoreflect.MessageType, i uint8) (protoreflect.MessageType, protoreflect.MessageType) {
	t.Helper()
	mt := types[int(i)%len(types)]
	twin, err := protoregistry.GlobalTypes.FindMessageByName("opaque." + mt.Descriptor().FullName())
	if err != nil {
		return mt, nil
	}
	return mt, twin
}

// decodeAnswer is what the codec makes of body for a message of type mt, as text: its problems,
// or the message as protojson writes it.
func decodeAnswer(t *testing.T, c *Codec, body []byte, m proto.Message) string {
	t.Helper()
	if err := c.Unmarshal(body, m); err != nil {
		if _, ok := err.(*jsoncodec.Error); !ok {
			t.Fatalf("got %T %v; want an *jsoncodec.Error", err, err)
		}
		return "error: " + err.Error()
	}
	return string(protojsonBytes(t, m))
}

// FuzzUnmarshalJSON decodes any body into any contract type along the codec's three paths — the
// generated codec, the Opaque-API twin and a dynamicpb message (both through protoreflect) — which must give the same answer; and holds that answer to protojson's:
// a body protojson reads is read into the same message, and a body protojson refuses is refused
// (the empty body aside, an empty object by the wire rules).
func FuzzUnmarshalJSON(f *testing.F) {
	types := contractMessages(f)
	r := rand.New(rand.NewPCG(31, 32))
	for i := range types {
		m := types[i].New()
		fill(r, m, 0)
		f.Add(uint8(i), protojsonBytes(f, m.Interface()))
	}
	c := New(Options{})
	f.Fuzz(func(t *testing.T, typ uint8, body []byte) {
		mt, twin := fuzzType(t, types, typ)
		name := mt.Descriptor().FullName()
		fast := decodeAnswer(t, c, body, mt.New().Interface())
		if got := decodeAnswer(t, c, body, dynamicpb.NewMessage(mt.Descriptor())); got != fast {
			t.Fatalf("%s from %q:\nprotoreflect path %s\nfast path         %s", name, body, got, fast)
		}
		if twin != nil {
			if got := decodeAnswer(t, c, body, twin.New().Interface()); got != fast {
				t.Fatalf("%s from %q:\nOpaque API %s\nopen API   %s", name, body, got, fast)
			}
		}
		ref := mt.New().Interface()
		refErr := protojson.Unmarshal(body, ref)
		switch {
		case refErr == nil && !json.Valid(body):
			// protojson reads a few bodies that are not JSON: an integer written with an exponent
			// and no digits after it ("grade": 5e; doubles it refuses). The front refuses every
			// body that is not JSON, as RFC 8259 asks.
			if !strings.HasPrefix(fast, "error: ") {
				t.Fatalf("%s from %q: got %s; the body is not JSON", name, body, fast)
			}
		case refErr == nil && fast != string(protojsonBytes(t, ref)):
			t.Fatalf("%s from %q:\ngot       %s\nprotojson %s", name, body, fast, protojsonBytes(t, ref))
		case refErr != nil && !bytes.HasPrefix([]byte(fast), []byte("error: ")) && !blank(body):
			t.Fatalf("%s from %q: got %s; protojson refuses it (%v)", name, body, fast, refErr)
		}
	})
}
