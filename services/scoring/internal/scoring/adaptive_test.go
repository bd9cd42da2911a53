package scoring

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

const adaptivePath = "/api/score/adaptive/next"

type nextBody struct {
	Next *struct {
		ID     string `json:"id"`
		Strand string `json:"strand"`
	} `json:"next"`
	StopReason     *string `json:"stopReason"`
	Ability        int     `json:"ability"`
	AbilityDisplay string  `json:"abilityDisplay"`
	Uncertainty    int     `json:"uncertainty"`
	ItemsAnswered  int     `json:"itemsAnswered"`
	Framework      string  `json:"framework"`
}

func decodeNext(t *testing.T, r servetest.Response) nextBody {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"next", "stopReason", "ability", "abilityDisplay", "uncertainty", "itemsAnswered", "framework", "apiVersion"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("answer %s has no %q; every field is always present", r.Body, k)
		}
	}
	var b nextBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAdaptiveSession runs a session through the JSON front, answering as a student at 900L
// would on average (right when the item is at least 100L easier), and checks each answer
// against pkg/measure, the Bayes path and the gRPC front.
func TestAdaptiveSession(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	bk, _ := measure.Demo().Bank("lexile")
	var answered []string
	var lib []measure.Response
	for step := 0; ; step++ {
		body := fmt.Sprintf(`{"framework":"Lexile","priorAbility":700,"priorUncertainty":200,"elapsedDays":10,"items":[%s],"stop":{"maxItems":8,"targetUncertainty":70}}`,
			strings.Join(answered, ","))
		got := decodeNext(t, s.Post(adaptivePath, body))
		want, err := bk.Next(&measure.AdaptiveRequest{Items: lib, PriorAbility: ptrF(700), PriorUncertainty: ptrF(200), ElapsedDays: ptrF(10),
			Stop: measure.StopRules{MaxItems: ptrI(8), TargetUncertainty: ptrF(70)}})
		if err != nil {
			t.Fatal(err)
		}
		if got.ItemsAnswered != step || got.Framework != "lexile" || got.Ability != measure.Round(want.Estimate.Ability) ||
			got.Uncertainty != measure.Round(want.Estimate.Uncertainty) || *got.StopReason != want.StopReason {
			t.Fatalf("step %d: %+v; want %+v", step, got, want)
		}
		// The same request over gRPC says the same.
		req := new(scoringv1.NextItemRequest)
		if err := jsonToProto(body, req); err != nil {
			t.Fatal(err)
		}
		viaGRPC, err := client.NextItem(s.Authed(context.Background()), req)
		if err != nil || viaGRPC.GetAbility() != int32(got.Ability) || viaGRPC.GetStopReason() != *got.StopReason ||
			viaGRPC.GetNext().GetId() != idOf(got) || viaGRPC.GetAbilityDisplay() != got.AbilityDisplay {
			t.Errorf("step %d: gRPC %v, %v; want the JSON answer %+v", step, viaGRPC, err, got)
		}
		if step > 0 {
			// The ability and uncertainty are the Bayes path's for the same answers and prior.
			bayes := decode(t, 200, s.Post("/api/score/items/idsWithResults/bayes",
				fmt.Sprintf(`{"priorAbility":700,"priorUncertainty":200,"elapsedDays":10,"items":[%s]}`, strings.Join(answered, ","))).Body)
			if bayes.Ability != got.Ability || bayes.Uncertainty != got.Uncertainty || bayes.AbilityDisplay != got.AbilityDisplay {
				t.Errorf("step %d: adaptive %d ± %d (%s); Bayes path %d ± %d (%s)", step, got.Ability, got.Uncertainty, got.AbilityDisplay,
					bayes.Ability, bayes.Uncertainty, bayes.AbilityDisplay)
			}
		}
		if *got.StopReason != "" {
			if got.Next != nil {
				t.Errorf("stopped (%s) with next %+v; want null", *got.StopReason, got.Next)
			}
			if step < 2 {
				t.Errorf("stopped after %d items", step)
			}
			return
		}
		if want.Next.ID != got.Next.ID || want.Next.Strand != got.Next.Strand {
			t.Fatalf("step %d: next %+v; want %s (%s)", step, got.Next, want.Next.ID, want.Next.Strand)
		}
		it, _ := bk.Item(got.Next.ID)
		right := it.Difficulty <= 800
		answered = append(answered, fmt.Sprintf(`{"id":%q,"result":%d}`, it.ID, map[bool]int{true: 1, false: 0}[right]))
		lib = append(lib, measure.Response{ID: it.ID, Correct: right})
		if step > 10 {
			t.Fatal("no stop after maxItems 8")
		}
	}
}

func jsonToProto(body string, m proto.Message) error {
	return protojson.UnmarshalOptions{}.Unmarshal([]byte(body), m)
}

func idOf(b nextBody) string {
	if b.Next == nil {
		return ""
	}
	return b.Next.ID
}

func ptrF(v float64) *float64 { return &v }
func ptrI(v int) *int         { return &v }

// TestAdaptiveOptions: pool, exclude, targetSuccess, seeded randomesque and an empty session
// through the JSON front, each as pkg/measure answers it.
func TestAdaptiveOptions(t *testing.T) {
	t.Parallel()
	s := start(t)
	bk, _ := measure.Demo().Bank("quantile")
	cases := []struct {
		name, body string
		req        measure.AdaptiveRequest
	}{
		{"nothing answered: the bank's median prior", `{"framework":"quantile"}`, measure.AdaptiveRequest{}},
		{"grade prior", `{"framework":"quantile","grade":5,"timeOfYear":"BOY","items":[]}`, measure.AdaptiveRequest{Grade: ptrI(5), TimeOfYear: ptrS("BOY")}},
		{"pool and exclude", `{"framework":"quantile","pool":["Q000010","Q000020","Q000030","Q000030"],"exclude":["Q000020"]}`,
			measure.AdaptiveRequest{Pool: []string{"Q000010", "Q000020", "Q000030"}, Exclude: []string{"Q000020"}}},
		{"target success", `{"framework":"quantile","items":[{"id":"Q000005","result":1}],"targetSuccess":0.75}`,
			measure.AdaptiveRequest{Items: []measure.Response{{ID: "Q000005", Correct: true}}, TargetSuccess: ptrF(0.75)}},
		{"seeded randomesque", `{"framework":"quantile","items":[{"id":"Q000005","result":0}],"randomesque":5,"seed":2147483647}`,
			measure.AdaptiveRequest{Items: []measure.Response{{ID: "Q000005"}}, Randomesque: ptrI(5), Seed: ptrI64(2147483647)}},
		{"seed as a number", `{"framework":"quantile","items":[{"id":"Q000005","result":0}],"randomesque":5,"seed":"-7"}`,
			measure.AdaptiveRequest{Items: []measure.Response{{ID: "Q000005"}}, Randomesque: ptrI(5), Seed: ptrI64(-7)}},
		{"classified", `{"framework":"quantile","items":` + items(6, 6, "Q") + `,"stop":{"cut":-300,"confidence":0.99}}`,
			measure.AdaptiveRequest{Items: responses(6, 6, "Q"), Stop: measure.StopRules{Cut: ptrF(-300), Confidence: ptrF(0.99)}}},
		{"content balancing", `{"framework":"quantile","items":[{"id":"Q000005","result":1}],"strands":{"Geometry":1,"Algebraic Thinking":3}}`,
			measure.AdaptiveRequest{Items: []measure.Response{{ID: "Q000005", Correct: true}}, Strands: map[string]float64{"Geometry": 1, "Algebraic Thinking": 3}}},
		{"pool exhausted", `{"framework":"quantile","items":[{"id":"Q000005","result":0}],"pool":["Q000005"]}`,
			measure.AdaptiveRequest{Items: []measure.Response{{ID: "Q000005"}}, Pool: []string{"Q000005"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := decodeNext(t, s.Post(adaptivePath, c.body))
			want, err := bk.Next(&c.req)
			if err != nil {
				t.Fatal(err)
			}
			if *got.StopReason != want.StopReason || idOf(got) != nextID(want) || got.Ability != measure.Round(want.Estimate.Ability) {
				t.Errorf("got %+v (next %s); want %+v (next %s)", got, idOf(got), want, nextID(want))
			}
		})
	}
}

func ptrS(v string) *string { return &v }
func ptrI64(v int64) *int64 { return &v }
func nextID(s measure.Step) string {
	if s.Next == nil {
		return ""
	}
	return s.Next.ID
}

func responses(n, correct int, prefix string) []measure.Response {
	out := make([]measure.Response, n)
	for i := range out {
		out[i] = measure.Response{ID: measureID(prefix, i+1), Correct: i < correct}
	}
	return out
}

// TestAdaptiveValidation: every problem at once, keyed by top-level field, each message naming
// the id, strand or value; over gRPC the full element paths.
func TestAdaptiveValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	cases := []struct {
		name, body string
		want       map[string][]string // validationErrors key -> message prefixes
	}{
		{"framework missing", `{"items":[]}`, map[string][]string{"framework": {"is required"}}},
		{"framework unknown", `{"framework":"french"}`, map[string][]string{"framework": {`unknown framework "french"`}}},
		{"ids", `{"framework":"lexile","items":[{"id":"L000001","result":1},{"id":"Q000001","result":1},{"id":"L000001","result":0},{"id":"NOPE","result":1},{"id":"L000002","result":3},{"id":"L000003"}],
			"pool":["Q000002"],"exclude":["nope"]}`, map[string][]string{
			"items": {
				`items[1].id: "Q000001" is a quantile item; the request's framework is lexile`,
				`items[2].id: "L000001" repeats items[0].id`,
				`items[3].id: unknown item id "NOPE"`,
				`items[4].result: must be 0 or 1, got 3`,
				`items[5].result: is required`,
			},
			"pool":    {`pool[0]: "Q000002" is a quantile item; the request's framework is lexile`},
			"exclude": {`exclude[0]: unknown item id "nope"`},
		}},
		{"settings", `{"framework":"lexile","randomesque":0,"targetSuccess":1,"stop":{"minItems":7,"maxItems":6,"confidence":0,"targetUncertainty":-1}}`, map[string][]string{
			"randomesque":   {"must be 1 or more, got 0"},
			"targetSuccess": {"must be between 0 and 1 (both excluded), got 1"},
			"stop": {
				"stop.minItems: 7 is more than stop.maxItems (6)",
				"stop.confidence: must be between 0 and 1 (both excluded), got 0",
				"stop.targetUncertainty: must be greater than 0",
			},
		}},
		{"prior halves", `{"framework":"lexile","priorAbility":700,"elapsedDays":3}`, map[string][]string{
			"priorUncertainty": {"is required with priorAbility"},
		}},
		{"prior other half", `{"framework":"lexile","priorUncertainty":70}`, map[string][]string{
			"priorAbility": {"is required with priorUncertainty"},
		}},
		{"grade", `{"framework":"lexile","grade":13,"timeOfYear":"fall"}`, map[string][]string{
			"grade":      {"must be between 0 (Kindergarten) and 12, got 13"},
			"timeOfYear": {`must be BOY, MOY or EOY, got "fall"`},
		}},
		{"strands", `{"framework":"lexile","strands":{"Poetry":1,"Vocabulary":0,"Key Ideas":"x"}}`, map[string][]string{
			"strands": { // a value of the wrong type and the others' problems, at once
				`strands["Key Ideas"]: must be a number, got "x"`,
				`strands["Poetry"]: unknown lexile strand "Poetry"`,
				`strands["Vocabulary"]: the share of strand "Vocabulary" must be a number greater than 0, got 0`,
			},
		}},
		{"strand values", `{"framework":"lexile","strands":{"Poetry":1,"Vocabulary":0}}`, map[string][]string{
			"strands": {
				`strands["Poetry"]: unknown lexile strand "Poetry"`,
				`strands["Vocabulary"]: the share of strand "Vocabulary" must be a number greater than 0, got 0`,
			},
		}},
		{"typo", `{"framework":"lexile","stop":{"maxItem":3}}`, map[string][]string{"stop": {`stop.maxItem: unknown field "maxItem"; did you mean "maxItems"?`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(adaptivePath, c.body)
			if r.Status != 400 {
				t.Fatalf("got %d %s; want 400", r.Status, r.Body)
			}
			var body struct {
				ValidationErrors map[string][]string `json:"validationErrors"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			got := body.ValidationErrors
			if len(got) != len(c.want) {
				t.Errorf("keys %v; want %v", got, c.want)
			}
			for key, prefixes := range c.want {
				if len(got[key]) != len(prefixes) {
					t.Errorf("%s: %q; want %d problems like %q", key, got[key], len(prefixes), prefixes)
					continue
				}
				for _, p := range prefixes {
					found := false
					for _, msg := range got[key] {
						found = found || strings.HasPrefix(msg, p)
					}
					if !found {
						t.Errorf("%s: %q; want one starting %q", key, got[key], p)
					}
				}
			}
		})
	}
	t.Run("gRPC keeps element paths", func(t *testing.T) {
		t.Parallel()
		client := scoringv1.NewScoringServiceClient(s.Conn)
		str := func(v string) *string { return &v }
		res := func(v int32) *int32 { return &v }
		_, err := client.NextItem(s.Authed(context.Background()), &scoringv1.NextItemRequest{
			Framework: str("lexile"),
			Items:     []*scoringv1.ItemResult{{Id: str("Q000001"), Result: res(1)}},
			Exclude:   []string{"L000001", "X"},
			Stop:      &scoringv1.StopRules{MinItems: res(-1)},
			Strands:   map[string]float64{"Poetry": 2},
		})
		want := map[string]string{
			`strands["Poetry"]`: `unknown lexile strand "Poetry" (known: Vocabulary, Key Ideas, Craft and Structure, Integration of Knowledge, Foundational Skills)`,
			"items[0].id":       `"Q000001" is a quantile item; the request's framework is lexile`,
			"exclude[1]":        `unknown item id "X"`,
			"stop.minItems":     "must be 0 or more, got -1",
		}
		if got := violations(t, err); !reflect.DeepEqual(got, want) {
			t.Errorf("got %v; want %v", got, want)
		}
	})
}
