package jsonwire

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

func TestDecodeRules(t *testing.T) {
	t.Parallel()
	c := New(Options{
		Aliases:      map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.ItemId": {"itemid": "id"}},
		Ignored:      map[protoreflect.FullName][]string{"yardstick.scoring.v1.ScoreItemIdsRequest": {"extra"}},
		Positional:   map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
		NumberAsText: map[protoreflect.FullName][]string{"yardstick.scoring.v1.ScoreScaleRequest": {"scaleScore"}},
	})
	for _, tc := range []struct {
		name string
		msg  func() protoreflect.ProtoMessage
		body string
		want string   // protojson of the result, when decoding succeeds
		errs []string // "path: message", when it fails
	}{
		{"whole number written as 2.0 and 2e0", ids, `{"numberCorrect":2.0}`, `{"numberCorrect":2}`, nil},
		{"exponent form", ids, `{"numberCorrect":1e1}`, `{"numberCorrect":10}`, nil},
		{"quoted whole number, as protojson takes it", ids, `{"numberCorrect":"3"}`, `{"numberCorrect":3}`, nil},
		{"quoted non-number", ids, `{"numberCorrect":"three"}`, "", []string{`numberCorrect: must be a whole number, got "three"`}},
		{"int32 range: last accepted", ids, `{"numberCorrect":2147483647}`, `{"numberCorrect":2147483647}`, nil},
		{"int32 range: first refused", ids, `{"numberCorrect":2147483648}`, "", []string{"numberCorrect: must be a whole number from -2147483648 to 2147483647, got 2147483648"}},
		{"null leaves a field unset", ids, `{"numberCorrect":null,"items":null}`, `{}`, nil},
		{"alias", ids, `{"items":[{"itemid":"L1"}]}`, `{"items":[{"id":"L1"}]}`, nil},
		{"proto name, as protojson takes it", ids, `{"number_correct":1}`, `{"numberCorrect":1}`, nil},
		{"ignored extra", ids, `{"extra":{"any":[1,2]},"numberCorrect":1}`, `{"numberCorrect":1}`, nil},
		{"null list element", ids, `{"items":[null]}`, "", []string{"items[0]: must be an object, not null"}},
		{"every problem, not only the first", ids, `{"items":[{"id":5},{"idd":"x"}],"numberCorect":1,"framework":7}`, "", []string{
			"items[0].id: must be a string, got a number", `items[1].idd: unknown field "idd"; did you mean "id"?`,
			`numberCorect: unknown field "numberCorect"; did you mean "numberCorrect"?`, "framework: must be a string, got a number"}},
		{"number as text", scale, `{"scaleScore":512.50}`, `{"scaleScore":"512.50"}`, nil},
		{"string field elsewhere refuses a number", scale, `{"linkId":5}`, "", []string{"linkId: must be a string, got a number"}},
		{"positional entry", group, `{"studentData":[[1.5,2,3]]}`, `{"studentData":[{"priorAbility":1.5,"priorUncertainty":2,"elapsedDays":3}]}`, nil},
		{"positional entry of nulls", group, `{"studentData":[[null,2,3]]}`, "", []string{"studentData[0]: an array entry must hold exactly 3 numbers: priorAbility, priorUncertainty, elapsedDays"}},
		{"double overflow", group, `{"testUncertainty":1e400}`, "", []string{"testUncertainty: must be a finite number, got 1e400"}},
		{"quoted NaN, as protojson takes it", group, `{"testUncertainty":"NaN"}`, `{"testUncertainty":"NaN"}`, nil},
		{"map of numbers", next, `{"strands":{"Key Ideas":2,"Vocabulary":0.5}}`, `{"strands":{"Key Ideas":2,"Vocabulary":0.5}}`, nil},
		{"empty map", next, `{"strands":{}}`, `{}`, nil},
		{"map problems name the key", next, `{"strands":{"A":"x","B":1,"B":2,"C":null}}`, "", []string{
			`strands["A"]: must be a number, got "x"`, `strands["B"]: appears more than once`, `strands["C"]: must be a number`}},
		{"a long key is clipped", next, `{"strands":{"` + strings.Repeat("k", 100) + `":"x"}}`, "", []string{
			`strands["` + strings.Repeat("k", 64) + `…"]: must be a number, got "x"`}},
		{"map expected", next, `{"strands":[1]}`, "", []string{"strands: must be an object"}},
		{"empty body is an empty object", ids, ``, `{}`, nil},
		{"white space only", ids, " \n", `{}`, nil},
		{"a string is not an object", ids, `"x"`, "", []string{"request body must be a JSON object"}},
		{"list expected", ids, `{"items":{}}`, "", []string{"items: must be an array"}},
		{"null in a list of numbers", group, `{"cutLevels":[1,null,"x"]}`, "", []string{"cutLevels[1]: must be a number, not null", `cutLevels[2]: must be a number, got "x"`}},
		{"list of numbers", group, `{"cutLevels":[1,"2.5"]}`, `{"cutLevels":[1,2.5]}`, nil},
		{"positional entry", group, `{"studentData":[[1,2,3]]}`, `{"studentData":[{"priorAbility":1,"priorUncertainty":2,"elapsedDays":3}]}`, nil},
		{"bad escape", ids, `{"framework":"\q"}`, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tc.msg()
			err := c.Unmarshal([]byte(tc.body), m)
			// The protoreflect path (a message without a generated codec) gives the same answer.
			dyn := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
			if derr := c.Unmarshal([]byte(tc.body), dyn); errString(derr) != errString(err) {
				t.Errorf("protoreflect path: got error %v; want %v (the generated codec's)", derr, err)
			} else if err == nil && !bytes.Equal(protojsonBytes(t, dyn), protojsonBytes(t, m)) {
				t.Errorf("protoreflect path: got %s; want %s (the generated codec's)", protojsonBytes(t, dyn), protojsonBytes(t, m))
			}
			if tc.want != "" {
				if err != nil {
					t.Fatalf("got %v; want %s", err, tc.want)
				}
				got, _ := protojson.Marshal(m)
				if !sameJSON(got, []byte(tc.want)) {
					t.Errorf("got %s; want %s", got, tc.want)
				}
				return
			}
			werr, ok := err.(*jsoncodec.Error)
			if !ok {
				t.Fatalf("got %v; want an *jsoncodec.Error", err)
			}
			if tc.errs == nil {
				if len(werr.Problems) != 1 || !strings.HasPrefix(werr.Problems[0].Message, "request body is not valid JSON") {
					t.Errorf("got %v; want one 'not valid JSON' problem", werr.Problems)
				}
				return
			}
			var got []string
			for _, p := range werr.Problems {
				if p.Path == "" {
					got = append(got, p.Message)
				} else {
					got = append(got, p.Path+": "+p.Message)
				}
			}
			if !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("got %q; want %q", got, tc.errs)
			}
		})
	}
}

func TestProblemsAreBounded(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	body := `{"studentData":[` + strings.Repeat(`{"priorAbility":"x"},`, 500) + `{}]}`
	err := c.Unmarshal([]byte(body), new(forecastv1.GroupForecastRequest))
	werr, ok := err.(*jsoncodec.Error)
	if !ok || len(werr.Problems) != jsoncodec.MaxProblems || werr.Dropped != 400 {
		t.Fatalf("got %v; want %d problems listed and 400 more counted", err, jsoncodec.MaxProblems)
	}
	if !strings.HasSuffix(werr.Error(), "; 400 more problems not listed") {
		t.Errorf("message ends %q; want the count of the problems not listed", werr.Error()[max(0, len(werr.Error())-60):])
	}
}

func ids() protoreflect.ProtoMessage   { return new(scoringv1.ScoreItemIdsRequest) }
func scale() protoreflect.ProtoMessage { return new(scoringv1.ScoreScaleRequest) }
func next() protoreflect.ProtoMessage  { return new(scoringv1.NextItemRequest) }
func group() protoreflect.ProtoMessage { return new(forecastv1.GroupForecastRequest) }

func sameJSON(a, b []byte) bool {
	var va, vb any
	return jsonUnmarshal(a, &va) == nil && jsonUnmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// TestProblemsQuoteLittle (issue 19): a problem shows at most MaxQuoted bytes of the caller's
// input — a 1 MB key made a 2 MB answer — names a key that is not UTF-8 in valid text, and a
// syntax error deep in nested arrays is one short message, not "array: " per level.
func TestProblemsQuoteLittle(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	k64, k65, k1m := strings.Repeat("k", 64), strings.Repeat("k", 65), strings.Repeat("k", 1<<20)
	digits := strings.Repeat("9", 100)
	for _, tc := range []struct {
		name string
		body string
		errs []string
	}{
		{"key of 64 bytes: shown whole", `{"` + k64 + `":1}`, []string{k64 + `: unknown field "` + k64 + `"`}},
		{"key of 65 bytes: its first 64 and a note", `{"` + k65 + `":1}`, []string{k64 + `…: unknown field "` + k64 + `…" (65 bytes; the first 64 shown)`}},
		{"key of 1 MiB", `{"` + k1m + `":1}`, []string{k64 + `…: unknown field "` + k64 + `…" (1048576 bytes; the first 64 shown)`}},
		{"cut between characters", `{"` + strings.Repeat("é", 40) + `":1}`, []string{strings.Repeat("é", 32) + `…: unknown field "` + strings.Repeat("é", 32) + `…" (80 bytes; the first 64 shown)`}},
		{"key not UTF-8", "{\"\xff\xfea\":1}", []string{"\ufffda: unknown field \"\ufffda\": a field name must be valid UTF-8 text"}},
		{"long whole number", `{"numberCorrect":` + digits + `}`, []string{"numberCorrect: must be a whole number from -2147483648 to 2147483647, got " + digits[:64] + "… (100 bytes; the first 64 shown)"}},
		{"long quoted text for a number", `{"numberCorrect":"` + strings.Repeat("x", 100) + `"}`, []string{`numberCorrect: must be a whole number, got "` + strings.Repeat("x", 64) + `…" (100 bytes; the first 64 shown)`}},
		{"syntax error three levels deep", `{"extra":[[[1,]]]}`, []string{`extra: unknown field "extra"`, "request body is not valid JSON: unexpected byte 93 ']' at 14"}},
		{"nested past the tokenizer's limit", `{"extra":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, []string{`extra: unknown field "extra"`, "request body is not valid JSON: arrays and objects nest too deeply"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			werr, ok := c.Unmarshal([]byte(tc.body), ids()).(*jsoncodec.Error)
			if !ok {
				t.Fatalf("got no *jsoncodec.Error; want %q", tc.errs)
			}
			var got []string
			for _, p := range werr.Problems {
				if p.Path == "" {
					got = append(got, p.Message)
				} else {
					got = append(got, p.Path+": "+p.Message)
				}
			}
			if !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("got %.300q; want %.300q", got, tc.errs)
			}
		})
	}
}
