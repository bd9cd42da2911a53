package httpfront

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// TestMarshalFallback: a message jsonwire does not write is protojson's answer without its
// white space (which protojson varies from build to build), inside strings kept.
func TestMarshalFallback(t *testing.T) {
	t.Parallel()
	m, err := structpb.NewStruct(map[string]any{"a": 1, "s": `keeps "quoted" spaces , : inside`, "l": []any{1, "x\\\" y", nil}})
	if err != nil {
		t.Fatal(err)
	}
	codec := jsonwire.New(jsonwire.Options{})
	if _, err := codec.Marshal(nil, m); !errors.Is(err, jsonwire.ErrUnsupported) {
		t.Fatalf("jsonwire writes a Struct (%v); the test needs a message it does not", err)
	}
	got, err := marshal(codec, m)
	if err != nil {
		t.Fatal(err)
	}
	pj, err := fallback.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, pj); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || bytes.ContainsAny(got, "\n\t") || !bytes.Contains(got, []byte(`spaces , : inside`)) {
		t.Errorf("got %s; want %s", got, want.Bytes())
	}
}
