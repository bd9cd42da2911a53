package scoring

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// startOn runs the scoring service on the bundle in dir; the returned Live reloads it.
func startOn(t *testing.T, dir string) (*servetest.Server, *measure.Live) {
	t.Helper()
	content, err := measure.OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil), content
}

// answer posts body and decodes a 200 answer, failing on any other status.
func answer(t *testing.T, s *servetest.Server, path, body string) map[string]any {
	t.Helper()
	r := s.Post(path, body)
	var out map[string]any
	if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil {
		t.Fatalf("POST %s %s: got %d %s; want 200", path, body, r.Status, r.Body)
	}
	return out
}

// refused posts body and checks a 400 whose problem under field is want.
func refused(t *testing.T, s *servetest.Server, path, body, field, want string) {
	t.Helper()
	r := s.Post(path, body)
	var out struct {
		ValidationErrors map[string][]string `json:"validationErrors"`
	}
	if r.Status != 400 || json.Unmarshal(r.Body, &out) != nil {
		t.Fatalf("POST %s %s: got %d %s; want 400", path, body, r.Status, r.Body)
	}
	if got := strings.Join(out.ValidationErrors[field], "; "); got != want {
		t.Errorf("POST %s: %s problem got %q; want %q", path, field, got, want)
	}
}

// wantMeasure checks a measure answer against the library's estimate on the bundle.
func wantMeasure(t *testing.T, what string, got map[string]any, fw *measure.Framework, est measure.Estimate, grade int) {
	t.Helper()
	display := fw.Display(est.Ability)
	if grade >= 0 {
		display = fw.DisplayGrade(est.Ability, grade)
	}
	if got["ability"] != float64(measure.Round(est.Ability)) || got["uncertainty"] != float64(measure.Round(est.Uncertainty)) ||
		got["abilityDisplay"] != display || got["framework"] != fw.Name {
		t.Errorf("%s: got %v; want ability %d ± %d, display %s, framework %s", what, got,
			measure.Round(est.Ability), measure.Round(est.Uncertainty), display, fw.Name)
	}
}

// TestFromNothing: a bundle made by yardstick-calibrate -new-framework from simulated responses
// alone (a made-up framework with its own label and units, partial credit items included) loads
// in the scoring service; every scoring, strand, adaptive, catalog and batch path answers on it
// as pkg/measure computes on the calibrated difficulties, and what needs a part the bundle lacks
// (strand benchmarks, a norm curve, links, forms) is a 400 naming the field, until the operator
// adds the part (here benchmarks.csv, which the bundle takes as is).
func TestFromNothing(t *testing.T) {
	t.Parallel()
	nc := servetest.FromNothing(t)
	s, live := startOn(t, nc.Dir)
	b := live.Bundle()
	fw, ok := b.Framework(servetest.NewFramework)
	if !ok || b.FrameworkList() != servetest.NewFramework {
		t.Fatalf("bundle frameworks %s; want %s only", b.FrameworkList(), servetest.NewFramework)
	}
	ids := append(append([]string{}, nc.Dichotomous[:8]...), nc.Polytomous[0], nc.Polytomous[4])
	var results, idList []string
	var answers []measure.Answer
	for i, id := range ids {
		it, _ := b.Item(id)
		score := (i * 7) % (it.MaxScore() + 1)
		results = append(results, fmt.Sprintf(`{"id":%q,"result":%d}`, id, score))
		idList = append(idList, fmt.Sprintf(`{"id":%q}`, id))
		answers = append(answers, measure.Answer{Item: it, Score: score, Correct: score == 1})
	}
	items, onlyIDs := "["+strings.Join(results, ",")+"]", "["+strings.Join(idList, ",")+"]"
	test := measure.TestOf(answers)
	std, err := fw.Standard(test)
	if err != nil {
		t.Fatal(err)
	}
	prior := measure.Normal{Mean: 450, SD: 150}
	bayes, err := fw.Bayes(test, prior)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("scoring", func(t *testing.T) {
		wantMeasure(t, "results standard", answer(t, s, "/api/score/items/idsWithResults/standard", `{"items":`+items+`}`), fw, std, -1)
		wantMeasure(t, "ids standard", answer(t, s, "/api/score/items/ids/standard",
			fmt.Sprintf(`{"items":%s,"numberCorrect":%d,"framework":"ACME-READ"}`, onlyIDs, test.Correct)), fw, std, -1)
		wantMeasure(t, "results bayes", answer(t, s, "/api/score/items/idsWithResults/bayes",
			`{"items":`+items+`,"priorAbility":450,"priorUncertainty":150,"elapsedDays":0}`), fw, bayes, -1)
		// Any id of an operator's bank is taken on the item-ids Bayes path (no id prefixes).
		wantMeasure(t, "ids bayes", answer(t, s, "/api/score/items/ids/bayes",
			fmt.Sprintf(`{"items":%s,"numberCorrect":%d,"priorAbility":450,"priorUncertainty":150,"elapsedDays":0}`, onlyIDs, test.Correct)), fw, bayes, -1)
		var dl []string
		for _, d := range test.Items {
			if len(d.Steps) > 0 {
				st, _ := json.Marshal(d.Steps)
				dl = append(dl, fmt.Sprintf(`{"steps":%s}`, st))
			} else {
				dl = append(dl, fmt.Sprintf(`{"difficulty":%v,"count":%d}`, d.Measure, d.Count))
			}
		}
		wantMeasure(t, "difficulties bayes", answer(t, s, "/api/score/items/difficulties/bayes",
			fmt.Sprintf(`{"items":[%s],"numberCorrect":%d,"framework":"acme-read","priorAbility":450,"priorUncertainty":150,"elapsedDays":0}`, strings.Join(dl, ","), test.Correct)), fw, bayes, -1)
		const noCurve = `the bundle has no norm curve for framework "acme-read", so a prior cannot be moved forward (send 0)`
		refused(t, s, "/api/score/items/idsWithResults/bayes", `{"items":`+items+`,"priorAbility":450,"priorUncertainty":150,"elapsedDays":1}`, "elapsedDays", noCurve)
		refused(t, s, "/api/score/items/ids/standard", `{"items":`+onlyIDs+`,"numberCorrect":1,"framework":"lexile"}`, "framework", `unknown framework "lexile" (want acme-read)`)
		refused(t, s, "/api/score/items/idsWithResults/standard", `{"items":`+items+`,"grade":3,"timeOfYear":"MOY"}`, "grade",
			"the content bundle has no acme-read norms for grade 3 MOY, so no percentile can be given")
		refused(t, s, "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":500,"scaleSem":20}`, "linkId", `unknown link table "STATE-READ-2026"`)
		refused(t, s, "/api/score/form/id/standard", `{"formId":"FORM-READ-G3","numberCorrect":1}`, "formId", `unknown form "FORM-READ-G3"`)
	})
	t.Run("strands", func(t *testing.T) {
		body := `{"items":` + items + `,"grade":4,"timeOfYear":"MOY"}`
		refused(t, s, "/api/score/items/idsWithResults/standard/strands", body, "grade",
			`the bundle has no strand benchmarks for framework "acme-read", so strand categories are not available`)
	})
	t.Run("adaptive", func(t *testing.T) {
		bk, _ := b.Bank(fw.Name)
		step, err := bk.Next(&measure.AdaptiveRequest{Items: []measure.Response{{ID: ids[0], Score: 1}, {ID: ids[9], Score: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		got := answer(t, s, "/api/score/adaptive/next", fmt.Sprintf(`{"framework":"acme-read","items":[{"id":%q,"result":1},{"id":%q,"result":2}]}`, ids[0], ids[9]))
		next, _ := got["next"].(map[string]any)
		if next["id"] != step.Next.ID || got["ability"] != float64(measure.Round(step.Estimate.Ability)) || got["abilityDisplay"] != fw.Display(step.Estimate.Ability) {
			t.Errorf("adaptive: got %v; want next %s at ability %v", got, step.Next.ID, step.Estimate.Ability)
		}
		refused(t, s, "/api/score/adaptive/next", `{"framework":"acme-read","items":[],"grade":3}`, "grade",
			`the bundle has no norm curve for framework "acme-read", so a grade cannot choose the prior (send a prior, or neither)`)
	})
	t.Run("catalog", func(t *testing.T) {
		got := answer(t, s, "/api/content/items", `{"framework":"acme-read","pageSize":100}`)
		list, _ := got["items"].([]any)
		if len(list) != len(nc.Dichotomous)+len(nc.Polytomous) {
			t.Errorf("catalog: %d items; want %d", len(list), len(nc.Dichotomous)+len(nc.Polytomous))
		}
		for _, v := range list {
			it := v.(map[string]any)
			want, _ := b.Item(it["id"].(string))
			if it["difficulty"] != want.Difficulty || it["strand"] != want.Strand || it["maxScore"] != float64(want.MaxScore()) {
				t.Errorf("catalog item %v; the bundle has %+v", it, want)
			}
		}
		strands := answer(t, s, "/api/content/strands", `{"framework":"acme-read"}`)
		if fmt.Sprint(strands["strands"]) != "[Meaning Structure Words]" {
			t.Errorf("strands: got %v; want [Meaning Structure Words]", strands["strands"])
		}
		offers := answer(t, s, "/api/content/frameworks", `{}`)
		const want = `[map[benchmarks:false displayMax:1000 displayMin:0 forms:0 items:30 label:AR links:0 name:acme-read negativePrefix:N normCurve:false normsTables:0 partialCreditItems:6 strands:3 subject:reading successAtMatch:0.5 unitsPerLogit:100]]`
		if got := fmt.Sprint(offers["frameworks"]); got != want {
			t.Errorf("frameworks: got %s; want %s", got, want)
		}
		if links := answer(t, s, "/api/content/links", `{}`); fmt.Sprint(links["links"]) != "[]" {
			t.Errorf("links: got %v; want none", links["links"])
		}
		if forms := answer(t, s, "/api/content/forms", `{}`); fmt.Sprint(forms["forms"]) != "[]" {
			t.Errorf("forms: got %v; want none", forms["forms"])
		}
	})
	t.Run("batch", func(t *testing.T) {
		r := s.Batch("/api/score/batch", `{"id":"a","path":"/api/score/items/idsWithResults/standard","body":{"items":`+items+`}}`+"\n")
		lines, _ := servetest.ParseBatch(t, r.Body)
		var got map[string]any
		if len(lines) != 1 || lines[0].Status != 200 || json.Unmarshal(lines[0].Body, &got) != nil {
			t.Fatalf("batch: got %s", r.Body)
		}
		wantMeasure(t, "batch", got, fw, std, -1)
	})
	// The operator adds strand benchmarks (a CSV taken as is) and the strand paths answer.
	var bench strings.Builder
	bench.WriteString("framework,grade,time_of_year,lower,upper\n")
	for g := 0; g < measure.Grades; g++ {
		for _, toy := range []string{"BOY", "MOY", "EOY"} {
			fmt.Fprintf(&bench, "acme-read,%d,%s,%d,%d\n", g, toy, 300+20*g, 600+20*g)
		}
	}
	if err := os.WriteFile(filepath.Join(nc.Dir, "benchmarks.csv"), []byte(bench.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); err != nil || !changed {
		t.Fatalf("reload with benchmarks: changed %v, %v", changed, err)
	}
	b = live.Bundle()
	fw, _ = b.Framework(servetest.NewFramework)
	if offers := answer(t, s, "/api/content/frameworks", `{}`); !strings.Contains(fmt.Sprint(offers["frameworks"]), "benchmarks:true") {
		t.Errorf("frameworks after adding benchmarks: %v; want benchmarks:true", offers["frameworks"])
	}
	bm, _ := b.Benchmark(fw.Name, 4, "MOY")
	got := answer(t, s, "/api/score/items/idsWithResults/standard/strands", `{"items":`+items+`,"grade":4,"timeOfYear":"MOY"}`)
	wantMeasure(t, "strands", got, fw, std, 4)
	var want []string
	for _, st := range fw.Strands(answers, std.Ability, bm) {
		want = append(want, fmt.Sprintf("map[category:%d name:%s]", st.Category, st.Name))
	}
	if fmt.Sprint(got["strands"]) != "["+strings.Join(want, " ")+"]" {
		t.Errorf("strands: got %v; want %v", got["strands"], want)
	}
	gotB := answer(t, s, "/api/score/items/idsWithResults/bayes/strands", `{"items":`+items+`,"grade":4,"timeOfYear":"MOY","priorAbility":450,"priorUncertainty":150,"elapsedDays":0}`)
	wantMeasure(t, "bayes strands", gotB, fw, bayes, 4)
	if !strings.HasSuffix(gotB["abilityDisplay"].(string), servetest.NewLabel) {
		t.Errorf("display %v; want the framework's label %s", gotB["abilityDisplay"], servetest.NewLabel)
	}
}
