package scoring

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/services/servetest"
)

// TestEveryProblemAtOnce: a value of the wrong type does not hide the other problems of the
// request: the decoder's and the handler's come in one answer, in the body's order, on a unary
// path and in a batch record alike.
func TestEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		name, path, body string
		want             map[string][]string
	}{
		{"out of range, missing, wrong type", "/api/score/items/idsWithResults/standard",
			`{"items":[{"id":"L000100","result":-1},{"id":"LP00006","result":null},{"id":"LP00007","result":""}]}`,
			map[string][]string{"items": {
				"items[0].result: must be 0 or 1, got -1",
				`items[1].result: is required (a score from 0 to 3, the maximum score of item "LP00006")`,
				`items[2].result: must be a whole number, got ""`,
			}}},
		{"wrong type and a misspelt field beside fields missing", "/api/score/items/difficulties/bayes",
			`{"items":[{"difficulty":"hard"}],"numberCorect":1,"priorAbility":500,"priorUncertainty":70}`,
			map[string][]string{
				"items":         {`items[0].difficulty: must be a number, got "hard"`},
				"numberCorect":  {`unknown field "numberCorect"; did you mean "numberCorrect"?`},
				"framework":     {"is required (lexile or quantile)"},
				"numberCorrect": {"is required"},
				"elapsedDays":   {"is required"},
			}},
		{"a missing result in its item's terms", "/api/score/items/idsWithResults/bayes",
			`{"items":[{"id":"L000100"},{"id":"LP00007"}],"priorAbility":500,"priorUncertainty":70,"elapsedDays":0}`,
			map[string][]string{"items": {
				"items[0].result: is required (1 correct, 0 incorrect)",
				`items[1].result: is required (a score from 0 to 3, the maximum score of item "LP00007")`,
			}}},
		{"only the type error where the handler sees that field unset", "/api/score/items/idsWithResults/standard",
			`{"items":[{"id":"L000100","result":"1"},{"id":"L000200","result":true}]}`,
			map[string][]string{"items": {"items[1].result: must be a number, got true or false"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != 400 {
				t.Fatalf("got %d %s; want 400", r.Status, r.Body)
			}
			if got := problemsOf(t, r.Body); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("validationErrors: got %q; want %q", got, tc.want)
			}
			b := s.Batch("/api/score/batch", `{"id":"x","path":"`+tc.path+`","body":`+tc.body+"}\n")
			answers, _ := servetest.ParseBatch(t, b.Body)
			if len(answers) != 1 || answers[0].Status != 400 {
				t.Fatalf("batch: got %s; want one answer 400", b.Body)
			}
			if got := problemsOf(t, answers[0].Body); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batch record's validationErrors: got %q; want %q", got, tc.want)
			}
		})
	}
}

func problemsOf(t *testing.T, body []byte) map[string][]string {
	t.Helper()
	var e struct {
		ValidationErrors map[string][]string `json:"validationErrors"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for k, v := range e.ValidationErrors { // the known-strands lists and the like are not the point
		for i, m := range v {
			v[i], _, _ = strings.Cut(m, " (known:")
		}
		e.ValidationErrors[k] = v
	}
	return e.ValidationErrors
}
