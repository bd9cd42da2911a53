package jsonwire

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestContractHasGeneratedCodecs: every message type of the JSON front has a generated codec (the
// generator declining a kind it should take would silently move the front to the slow path), and
// the Opaque-API twins, which protoc-gen-go alone generates, have none: they test the protoreflect
// path.
func TestContractHasGeneratedCodecs(t *testing.T) {
	t.Parallel()
	for _, mt := range contractMessages(t) {
		name := mt.Descriptor().FullName()
		if _, ok := mt.New().Interface().(jsoncodec.Message); !ok {
			t.Errorf("%s has no generated codec; want one (make generate)", name)
		}
		twin, err := protoregistry.GlobalTypes.FindMessageByName("opaque." + name)
		if err != nil {
			continue
		}
		if _, ok := twin.New().Interface().(jsoncodec.Message); ok {
			t.Errorf("%s (Opaque API) has a generated codec; want none", twin.Descriptor().FullName())
		}
	}
}

// TestStringsOutliveTheBody: decoded strings share no memory with the body (they are cut from a
// copy of it, without unsafe), so the caller may reuse the body's buffer; escaped strings, which
// the tokenizer unescapes into a buffer of its own, are copied too.
func TestStringsOutliveTheBody(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	for _, tc := range []struct{ name, body, framework, id string }{
		{"as written", `{"framework":"lexile","items":[{"id":"L1"}]}`, "lexile", "L1"},
		{"escaped", `{"framework":"lex\u0069le","items":[{"id":"L\"1"}]}`, "lexile", `L"1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(tc.body)
			var m scoringv1.ScoreItemIdsRequest
			if err := c.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			for i := range body {
				body[i] = 'x'
			}
			if got := m.GetFramework(); got != tc.framework {
				t.Errorf("framework after the body was overwritten: got %q; want %q", got, tc.framework)
			}
			if got := m.GetItems()[0].GetId(); got != tc.id {
				t.Errorf("id after the body was overwritten: got %q; want %q", got, tc.id)
			}
		})
	}
}
