package jsonwire

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestScannerTakesCommonBodies: the scanner's pass decodes the bodies clients send (it would be
// a silent slowdown if it bailed on them) and bails on everything it leaves to the tokenizer;
// either way Unmarshal's answer is the tokenizer's alone (the problems, or the same message).
func TestScannerTakesCommonBodies(t *testing.T) {
	t.Parallel()
	c := New(Options{
		Aliases:      map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.ItemId": {"itemid": "id"}},
		Ignored:      map[protoreflect.FullName][]string{"yardstick.forecast.v1.GroupForecastRequest": {"framework"}},
		Positional:   map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
		NumberAsText: map[protoreflect.FullName][]string{"yardstick.scoring.v1.ScoreScaleRequest": {"scaleScore"}},
		ListLimits:   map[protoreflect.FullName]map[string]int{"yardstick.forecast.v1.GroupForecastRequest": {"cutLevels": 3}},
	})
	ids := func() proto.Message { return new(scoringv1.ScoreItemIdsRequest) }
	scale := func() proto.Message { return new(scoringv1.ScoreScaleRequest) }
	group := func() proto.Message { return new(forecastv1.GroupForecastRequest) }
	next := func() proto.Message { return new(scoringv1.NextItemRequest) }
	for _, tc := range []struct {
		name  string
		msg   func() proto.Message
		body  string
		taken bool // by the scanner
	}{
		{"the benchmark's body", func() proto.Message { return new(scoringv1.ScoreDifficultiesBayesRequest) }, string(difficulties40()), true},
		{"white space everywhere", ids, " {\n\t\"items\" : [ { \"id\" : \"L1\" } , {\"itemid\":\"L2\"} ] ,\r\"numberCorrect\" : 1 } \n", true},
		{"null fields and an empty list", ids, `{"items":[],"numberCorrect":null,"framework":null}`, true},
		{"numbers in every form", group, `{"testUncertainty":-0.5e+2,"cutLevels":[0,-0,1E3,2.50]}`, true},
		{"positional entries", group, `{"studentData":[[500,40,120],[ 1 , 2 , 3 ]],"cutLevels":[1]}`, true},
		{"an ignored value of every kind", group, `{"framework":{"a":[1,"x",true,false,null,{"b":[]}]},"cutLevels":[1]}`, true},
		{"number as text", scale, `{"scaleScore":512.50,"linkId":"STATE"}`, true},
		{"a map", next, `{"strands":{"Key Ideas":2,"Vocabulary":0.5}}`, true},
		{"non-ASCII text", ids, `{"framework":"é ü 漢字 😀"}`, true},
		{"an escape", ids, `{"framework":"lex\u0069le"}`, false},
		{"an unknown key", ids, `{"numberCorect":1}`, false},
		{"a duplicate key", ids, `{"numberCorrect":1,"numberCorrect":2}`, false},
		{"not a whole number", ids, `{"numberCorrect":2.5}`, false},
		{"a quoted number", ids, `{"numberCorrect":"2"}`, true},
		{"a list past its limit", group, `{"cutLevels":[1,2,3,4,5]}`, false},
		{"trailing data", ids, `{} x`, false},
		{"an empty body", ids, ``, false},
		{"a leading zero", ids, `{"numberCorrect":01}`, false},
		{"a cut literal", ids, `{"numberCorrect":nul}`, false},
		{"a control character in a string", ids, "{\"framework\":\"a\tb\"}", false},
		{"invalid UTF-8", ids, "{\"framework\":\"\xff\"}", false},
		{"a positional entry too short", group, `{"studentData":[[1,2]]}`, false},
		{"an ignored value nested past the scanner's depth", group, `{"framework":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, false},
		{"cut short", ids, `{"items":[{"id":"L1"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tc.msg()
			d := jsoncodec.Get([]byte(tc.body), c.rules)
			if d.Start() {
				m.(jsoncodec.Message).DecodeJSONWire(d)
				d.End()
			}
			taken := !d.Bailed()
			jsoncodec.Put(d)
			if taken != tc.taken {
				t.Errorf("scanner took the body: got %v; want %v", taken, tc.taken)
			}
			got, want := tc.msg(), tc.msg()
			err := c.Unmarshal([]byte(tc.body), got)
			refErr := c.unmarshalTokenizer([]byte(tc.body), want)
			if errString(err) != errString(refErr) {
				t.Fatalf("got error %v; want %v (the tokenizer's)", err, refErr)
			}
			if err == nil && !bytes.Equal(protojsonBytes(t, got), protojsonBytes(t, want)) {
				t.Errorf("got %s; want %s (the tokenizer's)", protojsonBytes(t, got), protojsonBytes(t, want))
			}
		})
	}
}

// scanRules are rules of every kind, on contract messages, for FuzzScanner.
var scanRules = Options{
	Aliases:      map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.ItemId": {"itemid": "id"}, "yardstick.scoring.v1.ItemResult": {"itemid": "id"}},
	Ignored:      map[protoreflect.FullName][]string{"yardstick.forecast.v1.GroupForecastRequest": {"framework"}, "yardstick.scoring.v1.ScoreItemResultsRequest": {"numberCorrect"}},
	Positional:   map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
	NumberAsText: map[protoreflect.FullName][]string{"yardstick.scoring.v1.ScoreScaleRequest": {"scaleScore"}},
	ListLimits: map[protoreflect.FullName]map[string]int{
		"yardstick.forecast.v1.GroupForecastRequest": {"cutLevels": 3}, "yardstick.forecast.v1.ForecastRequest": {"cutLevels": 3},
		"yardstick.scoring.v1.ScoreItemIdsRequest": {"items": 5}, "yardstick.scoring.v1.ScoreItemResultsRequest": {"items": 5},
	},
	MaxListLen: 8,
}

// FuzzScanner decodes any body into any contract type under rules of every kind, with the
// scanner's first pass and on the tokenizer alone: the answers (the problems, or the message) are
// the same.
func FuzzScanner(f *testing.F) {
	types := contractMessages(f)
	for i := range types {
		f.Add(uint8(i), []byte(`{"framework":{"a":[1,"x",true,null]},"studentData":[[1,2,3]],"items":[{"itemid":"L1","result":1}],"scaleScore":5.0,"numberCorrect":[]}`))
	}
	c := New(scanRules)
	f.Fuzz(func(t *testing.T, typ uint8, body []byte) {
		mt := types[int(typ)%len(types)]
		got, want := mt.New().Interface(), mt.New().Interface()
		err := c.Unmarshal(body, got)
		refErr := c.unmarshalTokenizer(body, want)
		if errString(err) != errString(refErr) {
			t.Fatalf("%s from %q: got error %v; want %v (the tokenizer's)", mt.Descriptor().FullName(), body, err, refErr)
		}
		if err == nil && !bytes.Equal(protojsonBytes(t, got), protojsonBytes(t, want)) {
			t.Fatalf("%s from %q: got %s; want %s (the tokenizer's)", mt.Descriptor().FullName(), body, protojsonBytes(t, got), protojsonBytes(t, want))
		}
	})
}
