package scoring

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestWireRules holds the JSON front to the wire rules a client of the original API relies on:
// each case is a request that must be answered as the rule says, and, where gRPC can carry the
// same request, the gRPC answer must say the same.
func TestWireRules(t *testing.T) {
	t.Parallel()
	s := start(t)
	const (
		bayes       = "/api/score/items/idsWithResults/bayes"
		difficulty  = "/api/score/items/difficulties/bayes"
		standard    = "/api/score/items/idsWithResults/standard"
		ids         = "/api/score/items/ids/standard"
		scale       = "/api/score/scale/standard"
		items       = `"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]`
		prior       = `"priorAbility":695.3,"priorUncertainty":80.5,"elapsedDays":30.5`
		wholePrior  = `"priorAbility":695,"priorUncertainty":80,"elapsedDays":30`
		difficultes = `"items":[{"difficulty":720.5,"count":2},{"difficulty":800}],"numberCorrect":2,"framework":"lexile"`
	)
	type want struct {
		status int
		key    string // validationErrors key that must hold msg (400 only)
		msg    string
	}
	for _, tc := range []struct {
		name, path, body string
		want             want
	}{
		// 1: measures take any finite number; counts stay whole.
		{"fractional prior (a forecast's ability passed on)", bayes, `{` + prior + `,` + items + `}`, want{status: 200}},
		{"fractional difficulty", difficulty, `{` + difficultes + `,` + prior + `}`, want{status: 200}},
		{"fractional scaleSem", scale, `{"linkId":"STATE-READ-2026","scaleScore":"500","scaleSem":10.5}`, want{status: 200}},
		{"fractional numberCorrect refused", ids, `{"items":[{"id":"L000100"}],"numberCorrect":0.5}`, want{400, "numberCorrect", "must be a whole number, got 0.5"}},
		{"2.0 is a whole number", ids, `{"items":[{"id":"L000100"},{"id":"L000200"}],"numberCorrect":1.0}`, want{status: 200}},
		{"fractional result refused", standard, `{"items":[{"id":"L000100","result":0.5}]}`, want{400, "items", "items[0].result: must be a whole number, got 0.5"}},
		// 2: errors keyed by top-level field, cross-field rules under nonFieldErrors.
		{"element problem under its top-level field", standard, `{"items":[{"id":"L000100","result":7}]}`, want{400, "items", "items[0].result: must be 0 or 1, got 7"}},
		{"numberCorrect against the item count", ids, `{"items":[{"id":"L000100"}],"numberCorrect":2}`, want{400, "nonFieldErrors", "numberCorrect (2) is more than the number of items (1)"}},
		{"mixed frameworks", standard, `{"items":[{"id":"L000100","result":1},{"id":"Q000100","result":0}]}`, want{400, "nonFieldErrors", "the items mix frameworks lexile and quantile; one request scores one framework"}},
		// 3: framework case, scaleScore as a number, itemid.
		{"framework in any case", standard, `{"framework":"Lexile",` + items + `}`, want{status: 200}},
		{"framework on difficulties in any case", difficulty, `{"items":[{"difficulty":700}],"numberCorrect":1,"framework":"QUANTILE",` + prior + `}`, want{status: 200}},
		{"scaleScore as a number", scale, `{"linkId":"STATE-READ-2026","scaleScore":500,"scaleSem":10}`, want{status: 200}},
		{"itemid for id", ids, `{"items":[{"itemid":"L000100"}],"numberCorrect":1}`, want{status: 200}},
		{"id and itemid together are one field twice", ids, `{"items":[{"id":"L000100","itemid":"L000200"}],"numberCorrect":1}`, want{400, "items", "items[0].id: appears more than once"}},
		// 5: unknown fields, trailing data, duplicate keys.
		{"typo in an optional field", difficulty, `{"items":[{"difficulty":700,"cont":3}],"numberCorrect":1,"framework":"lexile",` + prior + `}`, want{400, "items", `items[0].cont: unknown field "cont"; did you mean "count"?`}},
		{"unknown top-level field", standard, `{"itmes":[],` + items + `}`, want{400, "itmes", `unknown field "itmes"; did you mean "items"?`}},
		{"unknown field far from any", standard, `{` + items + `,"zzzzzzzzzz":1}`, want{400, "zzzzzzzzzz", `unknown field "zzzzzzzzzz"`}},
		{"numberCorrect on an item-result endpoint is ignored", standard, `{` + items + `,"numberCorrect":2}`, want{status: 200}},
		{"framework on a scale endpoint is ignored", scale, `{"linkId":"STATE-READ-2026","scaleScore":"500","scaleSem":10,"framework":"lexile"}`, want{status: 200}},
		{"trailing data", standard, `{` + items + `} trailing`, want{400, "nonFieldErrors", "unexpected data after the JSON object"}},
		{"two objects", standard, `{` + items + `}{` + items + `}`, want{400, "nonFieldErrors", "unexpected data after the JSON object"}},
		{"duplicate key", bayes, `{` + wholePrior + `,"priorAbility":700,` + items + `}`, want{400, "priorAbility", "appears more than once"}},
		{"not an object", standard, `[1,2]`, want{400, "nonFieldErrors", "request body must be a JSON object"}},
		{"malformed JSON", standard, `{"items":[`, want{400, "nonFieldErrors", "request body is not valid JSON: it ends too early"}},
		{"required field absent is named", bayes, `{` + items + `}`, want{400, "priorAbility", "is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != tc.want.status {
				t.Fatalf("got %d %s; want %d", r.Status, r.Body, tc.want.status)
			}
			if tc.want.status != 400 {
				return
			}
			var e struct {
				ValidationErrors map[string][]string `json:"validationErrors"`
			}
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range e.ValidationErrors[tc.want.key] {
				found = found || m == tc.want.msg
			}
			if !found {
				t.Errorf("validationErrors: got %v; want %q under %q", e.ValidationErrors, tc.want.msg, tc.want.key)
			}
		})
	}
}

// TestWireRulesOverGRPC: the rules gRPC can express answer alike on both fronts.
func TestWireRulesOverGRPC(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	ctx := s.Authed(context.Background())
	str := func(v string) *string { return &v }
	num := func(v float64) *float64 { return &v }
	res := func(v int32) *int32 { return &v }
	items := []*scoringv1.ItemResult{{Id: str("L000100"), Result: res(1)}, {Id: str("L000200"), Result: res(0)}, {Id: str("L000300"), Result: res(1)}}

	t.Run("fractional prior gives the JSON front's answer", func(t *testing.T) {
		got, err := client.ScoreItemResultsBayes(ctx, &scoringv1.ScoreItemResultsBayesRequest{
			PriorAbility: num(695.3), PriorUncertainty: num(80.5), ElapsedDays: num(30.5), Items: items,
		})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Post("/api/score/items/idsWithResults/bayes", `{"priorAbility":695.3,"priorUncertainty":80.5,"elapsedDays":30.5,"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}`)
		var viaJSON struct {
			Ability        int32  `json:"ability"`
			AbilityDisplay string `json:"abilityDisplay"`
			Uncertainty    int32  `json:"uncertainty"`
		}
		if err := json.Unmarshal(r.Body, &viaJSON); err != nil || r.Status != 200 {
			t.Fatalf("JSON: %d %s", r.Status, r.Body)
		}
		if got.GetAbility() != viaJSON.Ability || got.GetAbilityDisplay() != viaJSON.AbilityDisplay || got.GetUncertainty() != viaJSON.Uncertainty {
			t.Errorf("gRPC %v; JSON %+v; want the same measure", got, viaJSON)
		}
	})
	t.Run("framework in any case", func(t *testing.T) {
		got, err := client.ScoreItemResults(ctx, &scoringv1.ScoreItemResultsRequest{Items: items, Framework: str("LeXiLe")})
		if err != nil || got.GetFramework() != "lexile" {
			t.Errorf("got %v, %v; want a lexile measure", got, err)
		}
	})
	t.Run("element paths in BadRequest, cross-field rules with no field", func(t *testing.T) {
		_, err := client.ScoreItemIds(ctx, &scoringv1.ScoreItemIdsRequest{
			Items: []*scoringv1.ItemId{{Id: str("L000100")}, {Id: str("NOPE")}}, NumberCorrect: res(3),
		})
		want := map[string]string{
			"items[1].id": `unknown item id "NOPE"`,
			"":            "numberCorrect (3) is more than the number of items (2)",
		}
		if got := violations(t, err); !reflect.DeepEqual(got, want) {
			t.Errorf("got %v; want %v", got, want)
		}
	})
	t.Run("an unknown field is refused, not dropped", func(t *testing.T) {
		req := &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: str("L000100"), Result: res(1)}}}
		// Field 9 of ItemResult does not exist: what a client built from another .proto sends.
		unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 3)
		req.Items[0].ProtoReflect().SetUnknown(unknown)
		_, err := client.ScoreItemResults(ctx, req)
		want := map[string]string{"items[0]": "unknown field number 9"}
		if got := violations(t, err); !reflect.DeepEqual(got, want) {
			t.Errorf("got %v; want %v", got, want)
		}
	})
	t.Run("ErrorInfo reason is UPPER_SNAKE_CASE with a domain", func(t *testing.T) {
		_, err := client.ScoreItemResults(ctx, &scoringv1.ScoreItemResultsRequest{})
		var info *errdetails.ErrorInfo
		for _, d := range status.Convert(err).Details() {
			if i, ok := d.(*errdetails.ErrorInfo); ok {
				info = i
			}
		}
		if info.GetReason() != "VALIDATION_ERROR" || info.GetDomain() != "yardstick" || info.GetMetadata()["exceptionType"] != "ValidationError" {
			t.Errorf("got %v; want reason VALIDATION_ERROR, domain yardstick, exceptionType ValidationError", info)
		}
	})
}

// violations maps a gRPC InvalidArgument's BadRequest field violations, field -> description.
func violations(t *testing.T, err error) map[string]string {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("got %v; want InvalidArgument", err)
	}
	out := map[string]string{}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out[v.GetField()] = v.GetDescription()
			}
		}
	}
	return out
}
