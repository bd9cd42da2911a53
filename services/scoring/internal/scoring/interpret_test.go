package scoring

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// pattern is items L000001.. with results from a 0/1 string.
func pattern(results string) (string, []measure.Answer) {
	b := measure.Demo()
	parts := make([]string, len(results))
	answers := make([]measure.Answer, len(results))
	for i, r := range results {
		id := measureID("L", i+1)
		parts[i] = `{"id":"` + id + `","result":` + string(r) + `}`
		item, _ := b.Item(id)
		answers[i] = measure.Answer{Item: item, Correct: r == '1'}
	}
	return "[" + strings.Join(parts, ",") + "]", answers
}

func lexile(t *testing.T) *measure.Framework {
	t.Helper()
	fw, ok := measure.Demo().Framework("lexile")
	if !ok {
		t.Fatal("demo bundle lacks lexile")
	}
	return fw
}

type gradedBody struct {
	Ability     int32  `json:"ability"`
	Percentile  *int32 `json:"percentile"`
	Display     string `json:"abilityDisplay"`
	Uncertainty int32  `json:"uncertainty"`
}

func decodeGraded(t *testing.T, r servetest.Response) gradedBody {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	var b gradedBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPercentileOnScoringPaths: grade and timeOfYear on each path without strands add the
// percentile of the unrounded ability from the bundle's norms and cap abilityDisplay at the
// grade's cap; the rest of the answer is unchanged.
func TestPercentileOnScoringPaths(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := measure.Demo()
	fw := lexile(t)
	norms, _ := b.Norms("lexile", 3, "MOY")
	const prior = `"priorAbility":600,"priorUncertainty":90,"elapsedDays":60`
	items, answers := pattern("1101011010110010")
	std, _ := fw.Standard(measure.TestOf(answers))
	test := measure.Test{Items: []measure.Difficulty{{Measure: 650, Count: 4}, {Measure: 720, Count: 1}, {Measure: 800, Count: 5}}, Correct: 6}
	diff, _ := fw.Bayes(test, fw.Grow(measure.Normal{Mean: 600, SD: 90}, 60))
	for _, c := range []struct {
		path, body string
		exact      *float64 // the unrounded ability, where the test recomputes it
	}{
		{"/api/score/items/idsWithResults/standard", `"items":` + items, &std.Ability},
		{"/api/score/items/ids/standard", `"items":` + ids(6, "L") + `,"numberCorrect":4`, nil},
		{"/api/score/scale/standard", `"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18`, nil},
		{"/api/score/items/difficulties/bayes", `"items":[{"difficulty":650,"count":4},{"difficulty":720},{"difficulty":800,"count":5}],"numberCorrect":6,"framework":"lexile",` + prior, &diff.Ability},
		{"/api/score/items/idsWithResults/bayes", prior + `,"items":` + items, nil},
		{"/api/score/items/ids/bayes", `"items":` + ids(6, "L") + `,"numberCorrect":4,` + prior, nil},
		{"/api/score/scale/bayes", `"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18,` + prior, nil},
		{"/api/score/form/id/standard", `"formId":"FORM-READ-G3","numberCorrect":21`, nil},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			plain := decodeGraded(t, s.Post(c.path, `{`+c.body+`}`))
			got := decodeGraded(t, s.Post(c.path, `{`+c.body+`,"grade":3,"timeOfYear":"MOY"}`))
			if plain.Percentile != nil || got.Percentile == nil {
				t.Fatalf("percentile without grade %v, with %v; want none, then one", plain.Percentile, got.Percentile)
			}
			if got.Ability != plain.Ability || got.Uncertainty != plain.Uncertainty {
				t.Errorf("with a grade the measure is %d ± %d; want %d ± %d", got.Ability, got.Uncertainty, plain.Ability, plain.Uncertainty)
			}
			p := int(*got.Percentile)
			if near := norms.Rank(float64(got.Ability)); p < 1 || p > 99 || p < near-1 || p > near+1 {
				t.Errorf("percentile %d; want within 1 of the rank %d of the rounded ability %d", p, near, got.Ability)
			}
			if c.exact != nil {
				if want := norms.Rank(*c.exact); p != want {
					t.Errorf("percentile %d; want %d, the rank of %v", p, want, *c.exact)
				}
				if want := fw.DisplayGrade(*c.exact, 3); got.Display != want {
					t.Errorf("abilityDisplay %q; want %q", got.Display, want)
				}
			}
		})
	}
	// The grade's cap: a measure above grade 0's 850L shows as 850L there, and ranks 99.
	body := `{"items":[{"difficulty":1400,"count":10}],"numberCorrect":9,"framework":"lexile",` + prior + `}`
	plain := decodeGraded(t, s.Post("/api/score/items/difficulties/bayes", body))
	capped := decodeGraded(t, s.Post("/api/score/items/difficulties/bayes", strings.Replace(body, "{", `{"grade":0,"timeOfYear":"BOY",`, 1)))
	if plain.Ability <= 850 || plain.Display == "850L" || capped.Display != "850L" || capped.Percentile == nil || *capped.Percentile != 99 {
		t.Errorf("grade 0: %+v (plain %+v); want abilityDisplay 850L and percentile 99 for an ability above 850", capped, plain)
	}
}

// TestPercentileValidation: grade and timeOfYear come together, in range, and need norms; every
// problem is named at once, on both fronts.
func TestPercentileValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	const path = "/api/score/items/idsWithResults/standard"
	items, _ := pattern("1100")
	for _, c := range []struct {
		name, extra string
		want        map[string]string // validationErrors key -> message
	}{
		{"grade alone", `"grade":3`, map[string]string{"timeOfYear": "is required (BOY, MOY or EOY)"}},
		{"timeOfYear alone", `"timeOfYear":"MOY"`, map[string]string{"grade": "is required (0 for Kindergarten to 12)"}},
		{"grade above 12", `"grade":13,"timeOfYear":"MOY"`, map[string]string{"grade": "must be between 0 (Kindergarten) and 12, got 13"}},
		{"grade below 0", `"grade":-1,"timeOfYear":"MOY"`, map[string]string{"grade": "must be between 0 (Kindergarten) and 12, got -1"}},
		{"grade 12 is the last", `"grade":12,"timeOfYear":"EOY"`, nil},
		{"grade 0 is the first", `"grade":0,"timeOfYear":"BOY"`, nil},
		{"time of year in lower case", `"grade":3,"timeOfYear":"moy"`, nil},
		{"time of year", `"grade":3,"timeOfYear":"NOY"`, map[string]string{"timeOfYear": `must be BOY, MOY or EOY, got "NOY"`}},
		{"with other problems", `"grade":30,"framework":"klingon"`, map[string]string{"grade": "must be between 0 (Kindergarten) and 12, got 30", "timeOfYear": "is required (BOY, MOY or EOY)", "framework": `unknown framework "klingon" (want lexile or quantile)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(path, `{`+c.extra+`,"items":`+items+`}`)
			if c.want == nil {
				if r.Status != 200 {
					t.Errorf("got %d %s; want 200", r.Status, r.Body)
				}
				return
			}
			var e struct{ ValidationErrors map[string][]string }
			if r.Status != 400 || json.Unmarshal(r.Body, &e) != nil {
				t.Fatalf("got %d %s; want 400", r.Status, r.Body)
			}
			for k, msg := range c.want {
				if len(e.ValidationErrors[k]) != 1 || e.ValidationErrors[k][0] != msg {
					t.Errorf("validationErrors[%s] = %v; want [%q]", k, e.ValidationErrors[k], msg)
				}
			}
		})
	}
	client := scoringv1.NewScoringServiceClient(s.Conn)
	_, err := client.ScoreItemIds(s.Authed(context.Background()), &scoringv1.ScoreItemIdsRequest{
		Items: []*scoringv1.ItemId{{Id: ptr("L000001")}}, NumberCorrect: ptr(int32(1)), Grade: ptr(int32(3)),
	})
	if got := violations(t, err); got["timeOfYear"] != "is required (BOY, MOY or EOY)" || len(got) != 1 {
		t.Errorf("gRPC: got %v; want timeOfYear required", got)
	}
}

// TestPercentileWithoutNorms: a bundle without norms.csv answers as before, and a percentile
// asked of it is a 400 naming grade; fit needs no norms.
func TestPercentileWithoutNorms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "norms.csv")); err != nil {
		t.Fatal(err)
	}
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	items, _ := pattern("1100")
	if r := s.Post("/api/score/items/idsWithResults/standard", `{"items":`+items+`}`); r.Status != 200 {
		t.Errorf("without norms: got %d %s; want 200", r.Status, r.Body)
	}
	if r := s.Post("/api/score/items/idsWithResults/standard", `{"fit":true,"items":`+items+`}`); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"fit":{`)) {
		t.Errorf("fit without norms: got %d %s; want 200 with fit", r.Status, r.Body)
	}
	r := s.Post("/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18,"grade":3,"timeOfYear":"MOY"}`)
	want := `"grade":["the content bundle has no lexile norms for grade 3 MOY, so no percentile can be given"]`
	if r.Status != 400 || !bytes.Contains(r.Body, []byte(want)) {
		t.Errorf("got %d %s; want 400 with %s", r.Status, r.Body, want)
	}
}

// TestTimeOfYearAnyCase: timeOfYear is matched without regard to case, as framework is, on every
// path that takes it and on both fronts: "moy" and "Moy" answer byte for byte as "MOY"; a name
// that is no time of year in any case is still a 400 naming timeOfYear.
func TestTimeOfYearAnyCase(t *testing.T) {
	t.Parallel()
	s := start(t)
	const prior = `"priorAbility":600,"priorUncertainty":90,"elapsedDays":60`
	items, _ := pattern("1101011010110010")
	for _, c := range []struct{ path, body string }{
		{"/api/score/items/idsWithResults/standard", `"items":` + items},
		{"/api/score/items/ids/standard", `"items":` + ids(6, "L") + `,"numberCorrect":4`},
		{"/api/score/scale/standard", `"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18`},
		{"/api/score/items/difficulties/bayes", `"items":[{"difficulty":650,"count":4}],"numberCorrect":2,"framework":"lexile",` + prior},
		{"/api/score/items/idsWithResults/bayes", prior + `,"items":` + items},
		{"/api/score/items/ids/bayes", `"items":` + ids(6, "L") + `,"numberCorrect":4,` + prior},
		{"/api/score/scale/bayes", `"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18,` + prior},
		{"/api/score/form/id/standard", `"formId":"FORM-READ-G3","numberCorrect":21`},
		{"/api/score/items/idsWithResults/standard/strands", `"items":` + items},
		{"/api/score/items/idsWithResults/bayes/strands", prior + `,"items":` + items},
		{"/api/score/adaptive/next", `"framework":"lexile","items":[]`},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			want := s.Post(c.path, `{`+c.body+`,"grade":3,"timeOfYear":"MOY"}`)
			if want.Status != 200 {
				t.Fatalf("MOY: got %d %s; want 200", want.Status, want.Body)
			}
			for _, spelt := range []string{"moy", "Moy", "mOY"} {
				got := s.Post(c.path, `{`+c.body+`,"grade":3,"timeOfYear":"`+spelt+`"}`)
				if got.Status != 200 || !bytes.Equal(got.Body, want.Body) {
					t.Errorf("%s: got %d %s; want 200 %s", spelt, got.Status, got.Body, want.Body)
				}
			}
			bad := s.Post(c.path, `{`+c.body+`,"grade":3,"timeOfYear":"MOYY"}`)
			if bad.Status != 400 || !strings.Contains(string(bad.Body), `"timeOfYear":["must be BOY, MOY or EOY, got \"MOYY\""]`) {
				t.Errorf("MOYY: got %d %s; want 400 naming timeOfYear", bad.Status, bad.Body)
			}
		})
	}
	client := scoringv1.NewScoringServiceClient(s.Conn)
	for _, spelt := range []string{"EOY", "eoy"} {
		resp, err := client.ScoreItemIds(s.Authed(context.Background()), &scoringv1.ScoreItemIdsRequest{
			Items: []*scoringv1.ItemId{{Id: ptr("L000001")}, {Id: ptr("L000002")}}, NumberCorrect: ptr(int32(1)), Grade: ptr(int32(3)), TimeOfYear: ptr(spelt),
		})
		if err != nil || resp.Percentile == nil {
			t.Errorf("gRPC %s: got %v, %v; want an answer with a percentile", spelt, resp, err)
		}
	}
	_, err := client.ScoreItemIds(s.Authed(context.Background()), &scoringv1.ScoreItemIdsRequest{
		Items: []*scoringv1.ItemId{{Id: ptr("L000001")}}, NumberCorrect: ptr(int32(1)), Grade: ptr(int32(3)), TimeOfYear: ptr("fall"),
	})
	if got := violations(t, err); got["timeOfYear"] != `must be BOY, MOY or EOY, got "fall"` {
		t.Errorf("gRPC fall: got %v; want timeOfYear refused", got)
	}
}
