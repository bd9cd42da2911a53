package serve

import (
	"strings"
	"testing"
)

func TestJSONPathAt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, at, want string
	}{
		{"top-level field", `{"priorAbility": "x", "b": 1}`, `"x"`, "priorAbility"},
		{"array element field", `{"items":[{"id":"a","result":1},{"id":"b","result":"one"}]}`, `"one"`, "items[1].result"},
		{"nested object value", `{"a":{"b":{"c":true}}}`, `true`, "a.b.c"},
		{"array of numbers", `{"cutLevels":[1,2,"x"]}`, `"x"`, "cutLevels[2]"},
		{"object where a scalar belongs", `{"priorAbility": {"v":1}}`, `{"v"`, "priorAbility"},
		{"second line", "{\n  \"grade\": \"three\"\n}", `"three"`, "grade"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i := strings.Index(tc.doc, tc.at)
			line := 1 + strings.Count(tc.doc[:i], "\n")
			col := i - strings.LastIndex(tc.doc[:i], "\n")
			if got := jsonPathAt([]byte(tc.doc), line, col); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
	if got := jsonPathAt([]byte(`{"a":1}`), 9, 1); got != "" {
		t.Errorf("position beyond the document: got %q; want \"\"", got)
	}
}

func TestHasNestedArray(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]bool{
		`{"studentData":[{"a":1}],"cutLevels":[1,2]}`:         false,
		`{"studentData":[[1,2,3]]}`:                           true,
		`{"studentData":[ {"a":1} , [1,2,3]],"cutLevels":[]}`: true,
		`{"studentData":[ [1,2,3] ]}`:                         true,
		`{"studentData":[],"x":"[,["}`:                        true, // a false yes is safe
		`{"a":[1],"b":[2],"c":[3]}`:                           false,
	} {
		if got := hasNestedArray([]byte(doc)); got != want {
			t.Errorf("hasNestedArray(%s) = %v; want %v", doc, got, want)
		}
	}
}
