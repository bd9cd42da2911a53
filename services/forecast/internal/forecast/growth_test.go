package forecast

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

const growthPath = "/api/forecast/growth"

type growthBody struct {
	Sgp      int `json:"sgp"`
	SgpOrder int `json:"sgpOrder"`
	Priors   []struct {
		Grade      int    `json:"grade"`
		TimeOfYear string `json:"timeOfYear"`
	} `json:"priors"`
	Cuts []struct {
		Percentile     int     `json:"percentile"`
		Ability        float64 `json:"ability"`
		AbilityDisplay string  `json:"abilityDisplay"`
	} `json:"cuts"`
	Framework string `json:"framework"`
}

type growthPriorIn struct {
	Grade      int     `json:"grade"`
	TimeOfYear string  `json:"timeOfYear"`
	Ability    float64 `json:"ability"`
}

// expectGrowth is §15's answer computed on the demo bundle's model directly.
func expectGrowth(t *testing.T, fw string, current measure.Window, ability float64, priors []growthPriorIn, percentiles []int) (sgp, order int, cuts []float64) {
	t.Helper()
	ws := make([]measure.Window, len(priors))
	for k, p := range priors {
		ws[k] = measure.Window{Grade: p.Grade, TimeOfYear: p.TimeOfYear}
	}
	m, ok := measure.Demo().GrowthModelFor(fw, current, ws)
	if !ok {
		t.Fatalf("demo has no model for %s %s from %v", fw, current, ws)
	}
	pm := make([]float64, 0, 2)
	for _, p := range priors[len(priors)-m.Order():] {
		pm = append(pm, p.Ability)
	}
	q := m.Quantiles(pm)
	for _, pc := range percentiles {
		cuts = append(cuts, math.Floor(measure.Cut(&q, pc)+0.5))
	}
	return measure.SGP(&q, ability), m.Order(), cuts
}

// TestGrowthAnswers holds the answer to §15 computed on the demo bundle's norms: the model chosen
// (two priors with a two-prior model, else the latest prior's), the SGP, the cuts and their
// display; priors in any order.
func TestGrowthAnswers(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, c := range []struct {
		name        string
		fw          string
		grade       int
		ability     float64
		priors      []growthPriorIn // older first, as expectGrowth wants
		reverse     bool            // send the priors newest first
		percentiles []int
		wantOrder   int
	}{
		{"one prior", "lexile", 6, 820, []growthPriorIn{{5, "EOY", 760}}, false, []int{10, 50, 90}, 1},
		{"two priors", "lexile", 6, 820, []growthPriorIn{{4, "EOY", 640}, {5, "EOY", 760}}, false, []int{1, 35, 65, 99}, 2},
		{"two priors, newest first", "quantile", 8, 900, []growthPriorIn{{6, "EOY", 700}, {7, "EOY", 820}}, true, []int{50}, 2},
		{"two priors without a two-prior model", "quantile", 5, 700, []growthPriorIn{{2, "EOY", 400}, {4, "EOY", 640}}, false, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			send := append([]growthPriorIn(nil), c.priors...)
			if c.reverse {
				send[0], send[1] = send[1], send[0]
			}
			req := map[string]any{"framework": c.fw, "grade": c.grade, "timeOfYear": "EOY", "ability": c.ability, "priors": send}
			if c.percentiles != nil {
				req["percentiles"] = c.percentiles
			}
			body, _ := json.Marshal(req)
			r := s.Post(growthPath, string(body))
			var got growthBody
			if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
				t.Fatalf("got %d %s; want 200", r.Status, r.Body)
			}
			sgp, order, cuts := expectGrowth(t, c.fw, measure.Window{Grade: c.grade, TimeOfYear: "EOY"}, c.ability, c.priors, c.percentiles)
			if got.Sgp != sgp || got.SgpOrder != order || order != c.wantOrder {
				t.Errorf("sgp %d order %d; want %d order %d (order %d by the case)", got.Sgp, got.SgpOrder, sgp, order, c.wantOrder)
			}
			if got.Sgp < 1 || got.Sgp > 99 {
				t.Errorf("sgp %d outside 1 … 99", got.Sgp)
			}
			used := c.priors[len(c.priors)-order:]
			if len(got.Priors) != len(used) {
				t.Fatalf("priors %v; want %v", got.Priors, used)
			}
			for k, p := range used {
				if got.Priors[k].Grade != p.Grade || got.Priors[k].TimeOfYear != p.TimeOfYear {
					t.Errorf("priors[%d] %v; want grade %d %s", k, got.Priors[k], p.Grade, p.TimeOfYear)
				}
			}
			if len(got.Cuts) != len(cuts) {
				t.Fatalf("%d cuts; want %d: %s", len(got.Cuts), len(cuts), r.Body)
			}
			fw, _ := measure.Demo().Framework(c.fw)
			for k, want := range cuts {
				cut := got.Cuts[k]
				if cut.Percentile != c.percentiles[k] || cut.Ability != want || cut.AbilityDisplay != fw.DisplayGrade(want, c.grade) {
					t.Errorf("cut %d: %+v; want percentile %d at %v (%s)", k, cut, c.percentiles[k], want, fw.DisplayGrade(want, c.grade))
				}
			}
			// A current measure just above cut P is at least percentile P; at the cut it is below.
			for k, cut := range got.Cuts {
				q := cutQuantile(t, c.fw, c.grade, c.priors[len(c.priors)-order:], cut.Percentile)
				if sgpAt(t, s, req, q+0.001) < cut.Percentile || (cut.Percentile > 1 && sgpAt(t, s, req, q) >= cut.Percentile) {
					t.Errorf("cut %d (P %d at %v): the SGP does not turn to P just above the unrounded quantile %v", k, cut.Percentile, cut.Ability, q)
				}
			}
		})
	}
}

// cutQuantile is the unrounded quantile q_P of the demo model for these priors.
func cutQuantile(t *testing.T, fw string, grade int, priors []growthPriorIn, pc int) float64 {
	t.Helper()
	ws := make([]measure.Window, len(priors))
	pm := make([]float64, len(priors))
	for k, p := range priors {
		ws[k], pm[k] = measure.Window{Grade: p.Grade, TimeOfYear: p.TimeOfYear}, p.Ability
	}
	m, _ := measure.Demo().GrowthNorms(fw, measure.Window{Grade: grade, TimeOfYear: "EOY"}, ws)
	q := m.Quantiles(pm)
	return measure.Cut(&q, pc)
}

func sgpAt(t *testing.T, s *servetest.Server, req map[string]any, ability float64) int {
	t.Helper()
	m := map[string]any{}
	for k, v := range req {
		m[k] = v
	}
	m["ability"] = ability
	delete(m, "percentiles")
	body, _ := json.Marshal(m)
	r := s.Post(growthPath, string(body))
	var got growthBody
	if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	return got.Sgp
}

// TestGrowthBounds: the lowest and highest SGP, and a prior beyond its model's boundaries
// answering as at the boundary, on both sides.
func TestGrowthBounds(t *testing.T) {
	t.Parallel()
	s := start(t)
	m, ok := measure.Demo().GrowthNorms("lexile", measure.Window{Grade: 6, TimeOfYear: "EOY"}, []measure.Window{{Grade: 5, TimeOfYear: "EOY"}})
	if !ok {
		t.Fatal("demo has no lexile grade 6 model from grade 5")
	}
	post := func(ability, prior float64) growthBody {
		t.Helper()
		body := fmt.Sprintf(`{"framework":"lexile","grade":6,"timeOfYear":"EOY","ability":%v,"priors":[{"grade":5,"timeOfYear":"EOY","ability":%v}],"percentiles":[1,50,99]}`, ability, prior)
		r := s.Post(growthPath, body)
		var got growthBody
		if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
			t.Fatalf("%s: got %d %s; want 200", body, r.Status, r.Body)
		}
		return got
	}
	if got := post(m.Lowest-1, 760); got.Sgp != 1 {
		t.Errorf("current below every quantile: sgp %d; want 1", got.Sgp)
	}
	if got := post(m.Highest+1, 760); got.Sgp != 99 {
		t.Errorf("current above every quantile: sgp %d; want 99", got.Sgp)
	}
	if got := post(-10000, 760); got.Sgp != 1 {
		t.Errorf("current -10000: sgp %d; want 1", got.Sgp)
	}
	if got := post(10000, 760); got.Sgp != 99 {
		t.Errorf("current 10000: sgp %d; want 99", got.Sgp)
	}
	lo, hi := m.Splines[0].Boundaries[0], m.Splines[0].Boundaries[1]
	for _, c := range []struct{ beyond, at float64 }{{lo - 300, lo}, {-10000, lo}, {hi + 300, hi}, {10000, hi}} {
		for _, ability := range []float64{500, 800, 1100} {
			got, want := post(ability, c.beyond), post(ability, c.at)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("prior %v, current %v: %+v; want the answer at the boundary %v: %+v", c.beyond, ability, got, c.at, want)
			}
		}
	}
	// Inside the boundaries the prior matters: the check above is not vacuous.
	if a, b := post(800, lo), post(800, hi); a.Sgp == b.Sgp {
		t.Errorf("priors at both boundaries give sgp %d; want them to differ", a.Sgp)
	}
}

// TestGrowthGolden pins an answer's bytes on the JSON front, and the gRPC answer to the same.
func TestGrowthGolden(t *testing.T) {
	t.Parallel()
	s := start(t)
	const body = `{"framework":"lexile","grade":6,"timeOfYear":"EOY","ability":820,"priors":[{"grade":5,"timeOfYear":"EOY","ability":760},{"grade":4,"timeOfYear":"EOY","ability":640}],"percentiles":[10,25,50,75,90]}`
	r := s.Post(growthPath, body)
	if r.Status != 200 {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	servetest.Golden(t, filepath.Join("testdata", "growth.json"), r, *update)
	req := new(forecastv1.GrowthRequest)
	if err := protojson.Unmarshal([]byte(body), req); err != nil {
		t.Fatal(err)
	}
	msg, err := forecastv1.NewForecastServiceClient(s.Conn).Growth(s.Authed(context.Background()), req)
	if err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	servetest.SameBytesAsProtojson(t, msg, r.Body)
}

// TestGrowthRefusals: every field's rule, both sides of each bound, all problems at once.
func TestGrowthRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	prior := func(g int, toy string, a float64) map[string]any {
		return map[string]any{"grade": g, "timeOfYear": toy, "ability": a}
	}
	base := map[string]any{"framework": "lexile", "grade": 6, "timeOfYear": "EOY", "ability": 820, "priors": []any{prior(5, "EOY", 760)}}
	with := func(k string, v any) string {
		m := map[string]any{}
		for key, val := range base {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, c := range []struct {
		name, body, field, msg string // field "" = accepted; an element's path names it (priors[0].grade)
	}{
		{"percentiles 1 and 99 accepted", with("percentiles", []int{1, 99}), "", ""},
		{"percentile 0 refused", with("percentiles", []int{0, 50}), "percentiles[0]", "must be between 1 and 99, got 0"},
		{"percentile 100 refused", with("percentiles", []int{50, 100}), "percentiles[1]", "must be between 1 and 99, got 100"},
		{"percentiles repeated", with("percentiles", []int{50, 50}), "percentiles[1]", "50 does not follow 50; percentiles must increase"},
		{"percentiles decreasing", with("percentiles", []int{60, 40}), "percentiles[1]", "40 does not follow 60; percentiles must increase"},
		{"percentile not whole", with("percentiles", []float64{50.5}), "percentiles[0]", "must be a whole number, got 50.5"},
		{"percentiles not a list", with("percentiles", 50), "percentiles", "must be an array"},
		{"ability 10000 accepted", with("ability", 10000), "", ""},
		{"ability -10000 accepted", with("ability", -10000), "", ""},
		{"ability 10001 refused", with("ability", 10001), "ability", "must be a number between -10000 and 10000, got 10001"},
		{"ability -10001 refused", with("ability", -10001), "ability", "must be a number between -10000 and 10000, got -10001"},
		{"ability missing", with("ability", nil), "ability", "is required"},
		{"framework missing", with("framework", nil), "framework", "is required (lexile or quantile)"},
		{"framework unknown", with("framework", "klingon"), "framework", `unknown framework "klingon" (want lexile or quantile)`},
		{"framework any case", with("framework", "LEXILE"), "", ""},
		{"grade missing", with("grade", nil), "grade", "is required (0 for Kindergarten to 12): the grade the measure was taken in"},
		{"grade 13", with("grade", 13), "grade", "must be between 0 (Kindergarten) and 12, got 13"},
		{"grade -1", with("grade", -1), "grade", "must be between 0 (Kindergarten) and 12, got -1"},
		{"timeOfYear missing", with("timeOfYear", nil), "timeOfYear", "is required (BOY, MOY or EOY): when in the year the measure was taken"},
		{"timeOfYear wrong", with("timeOfYear", "SPRING"), "timeOfYear", `must be BOY, MOY or EOY, got "SPRING"`},
		{"timeOfYear any case", with("timeOfYear", "eoy"), "", ""},
		{"priors missing", with("priors", nil), "priors", "is required: one or two earlier measures, each {grade, timeOfYear, ability}"},
		{"priors empty", with("priors", []any{}), "priors", "is required: one or two earlier measures, each {grade, timeOfYear, ability}"},
		{"three priors", with("priors", []any{prior(3, "EOY", 500), prior(4, "EOY", 600), prior(5, "EOY", 700)}), "priors", "holds 3 measures; want one or two"},
		{"prior grade missing", with("priors", []any{map[string]any{"timeOfYear": "EOY", "ability": 700}}), "priors[0].grade", "is required (0 for Kindergarten to 12)"},
		{"prior grade 13", with("priors", []any{prior(13, "EOY", 700)}), "priors[0].grade", "must be between 0 (Kindergarten) and 12, got 13"},
		{"prior grade -1", with("priors", []any{prior(-1, "EOY", 700)}), "priors[0].grade", "must be between 0 (Kindergarten) and 12, got -1"},
		{"prior timeOfYear missing", with("priors", []any{map[string]any{"grade": 5, "ability": 700}}), "priors[0].timeOfYear", "is required (BOY, MOY or EOY)"},
		{"prior timeOfYear wrong", with("priors", []any{prior(5, "EOX", 700)}), "priors[0].timeOfYear", `must be BOY, MOY or EOY, got "EOX"`},
		{"prior ability missing", with("priors", []any{map[string]any{"grade": 5, "timeOfYear": "EOY"}}), "priors[0].ability", "is required"},
		{"prior ability 10001", with("priors", []any{prior(5, "EOY", 10001)}), "priors[0].ability", "must be a number between -10000 and 10000, got 10001"},
		{"prior ability -10000 accepted", with("priors", []any{prior(5, "EOY", -10000)}), "", ""},
		{"prior not before current", with("priors", []any{prior(6, "EOY", 700)}), "priors[0]", "grade 6 EOY is not before the current measure's grade 6 EOY"},
		{"prior just before current", with("priors", []any{prior(6, "MOY", 700)}), "priors", "the content bundle has no lexile growth norms for grade 6 EOY from grade 6 MOY"},
		{"priors of one window", with("priors", []any{prior(5, "EOY", 700), prior(5, "eoy", 710)}), "priors[1]", "repeats the window grade 5 EOY of another prior; priors are of different windows"},
		{"no norms, one prior", with("priors", []any{prior(2, "EOY", 400)}), "priors", "the content bundle has no lexile growth norms for grade 6 EOY from grade 2 EOY"},
		{"no norms, two priors", with("priors", []any{prior(5, "BOY", 700), prior(2, "EOY", 400)}), "priors", "the content bundle has no lexile growth norms for grade 6 EOY from grade 5 BOY, nor from grade 2 EOY and grade 5 BOY"},
		{"no norms for the current window", with("grade", 10), "priors", "the content bundle has no lexile growth norms for grade 10 EOY from grade 5 EOY"},
		{"unknown field", with("sgpp", 10), "sgpp", `unknown field "sgpp"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(growthPath, c.body)
			if c.field == "" {
				if r.Status != 200 {
					t.Errorf("got %d %s; want 200", r.Status, r.Body)
				}
				return
			}
			// The JSON front lists a problem of an element under its top-level field, the
			// element's path leading the message.
			got := badRequest(t, r)
			key, msg := c.field, c.msg
			if i := strings.IndexAny(c.field, "[."); i > 0 {
				key, msg = c.field[:i], c.field+": "+c.msg
			}
			if len(got[key]) != 1 || got[key][0] != msg {
				t.Errorf("validationErrors[%s] = %v; want [%q] (all: %v)", key, got[key], msg, got)
			}
			if len(got) != 1 { // one mistake, one problem: none inferred from a field already refused
				t.Errorf("validationErrors = %v; want only %s's", got, key)
			}
		})
	}
	t.Run("everything at once", func(t *testing.T) {
		t.Parallel()
		got := badRequest(t, s.Post(growthPath, `{"percentiles":[0],"priors":[{"grade":13}]}`))
		for f, n := range map[string]int{"framework": 1, "grade": 1, "timeOfYear": 1, "ability": 1, "priors": 3, "percentiles": 1} {
			if len(got[f]) != n {
				t.Errorf("validationErrors[%s] = %v; want %d problems", f, got[f], n)
			}
		}
	})
	t.Run("gRPC names the fields", func(t *testing.T) {
		t.Parallel()
		_, err := forecastv1.NewForecastServiceClient(s.Conn).Growth(s.Authed(context.Background()), &forecastv1.GrowthRequest{
			Framework: ptr("lexile"), Grade: ptr(int32(6)), TimeOfYear: ptr("EOY"), Ability: ptr(800.0),
			Priors: []*forecastv1.GrowthPrior{{Grade: ptr(int32(5)), TimeOfYear: ptr("EOY"), Ability: ptr(700.0)}}, Percentiles: []int32{100}})
		code, fields := fieldViolations(err)
		if code != codes.InvalidArgument || !fields["percentiles[0]"] || len(fields) != 1 {
			t.Errorf("got %v %v; want InvalidArgument naming percentiles[0]", code, fields)
		}
	})
}
