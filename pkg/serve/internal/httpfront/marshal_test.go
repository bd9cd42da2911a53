package httpfront

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestStripSpace(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"a": 1, "b": [1, 2,  3]}`,
		`{"s": "keeps \"quoted\" spaces , : inside", "t":"\\", "u" : "x\\\" y"}`,
		"{\n  \"a\": {\"b\": null},\t\"c\": true\r\n}",
		`{}`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		if got := stripSpace([]byte(doc)); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("stripSpace(%s) = %s; want %s", doc, got, want.Bytes())
		}
	}
}
