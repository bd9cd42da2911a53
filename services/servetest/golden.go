package servetest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Golden compares an answer with the golden file at path structurally (JSON whitespace and key
// order do not matter). With update it first rewrites the file from the answer.
func Golden(t testing.TB, path string, got Response, update bool) {
	t.Helper()
	value := got.JSON(t)
	if update {
		pretty, _ := json.MarshalIndent(value, "", "  ")
		if err := os.WriteFile(path, append(pretty, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run go test -update)", err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	if !reflect.DeepEqual(value, want) {
		t.Errorf("answer differs from %s:\ngot  %s\nwant %s", path, got.Body, raw)
	}
}

// SameJSON fails unless two JSON documents are structurally equal.
func SameJSON(t testing.TB, what string, a, b []byte) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("%s differ:\n%s\n%s", what, a, b)
	}
}

// SameBytesAsProtojson fails unless body is, byte for byte, what the JSON front answered before it
// had its own encoder: protojson (EmitUnpopulated) of msg with its white space removed.
func SameBytesAsProtojson(t testing.TB, msg proto.Message, body []byte) {
	t.Helper()
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Bytes()) {
		t.Errorf("answer bytes differ from protojson's:\ngot  %s\nwant %s", body, want.Bytes())
	}
}
