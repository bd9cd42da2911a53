package scoring

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// Partial credit on the wire (METHOD §13, docs/api.md): the demonstration bundle's polytomous
// items LP00006 (lexile, scored 0–3), LP00001 (lexile, 0–2) and QP00006 (quantile, 0–3) on every
// item path, on both fronts. TestPartialCreditAnswers checks that they are still scored so.

const (
	pathStandard      = "/api/score/items/idsWithResults/standard"
	pathIDs           = "/api/score/items/ids/standard"
	pathStrands       = "/api/score/items/idsWithResults/standard/strands"
	pathDifficulties  = "/api/score/items/difficulties/bayes"
	pathBayes         = "/api/score/items/idsWithResults/bayes"
	pathBayesStrands  = "/api/score/items/idsWithResults/bayes/strands"
	pathForm          = "/api/score/form/id/standard"
	pathAdaptive      = "/api/score/adaptive/next"
	pcPrior           = `"priorAbility":900,"priorUncertainty":150,"elapsedDays":0`
	pcItems           = `{"id":"L000001","result":1},{"id":"LP00006","result":%d},{"id":"L000002","result":0}`
	maxLP00006        = 3
	msgLP00006        = `must be 0 … 3 (the maximum score of item "LP00006"), got %d`
	pcDifficultyItems = `{"steps":[1302,1501,1700],"count":2},{"difficulty":-131}`
)

// pcBody is a request of path whose items are pcItems with LP00006's result r.
func pcBody(path string, r int) string {
	items := fmt.Sprintf(`"items":[`+pcItems+`]`, r)
	switch path {
	case pathStandard:
		return `{` + items + `}`
	case pathBayes:
		return `{` + pcPrior + `,` + items + `}`
	case pathStrands:
		return `{"grade":5,"timeOfYear":"MOY",` + items + `}`
	case pathBayesStrands:
		return `{` + pcPrior + `,"grade":5,"timeOfYear":"MOY",` + items + `}`
	case pathAdaptive:
		return `{"framework":"lexile",` + items + `}`
	}
	panic(path)
}

// problem is a 400's expected problem: its full element path (gRPC's field; "" for a rule
// across fields) and its description.
type problem struct{ field, desc string }

// pcCase is a request both fronts must answer alike: 200, or 400 naming want.
type pcCase struct {
	name, path, body string
	want             *problem // nil: 200
	json             bool     // JSON only (the body is not protojson: a type error of the JSON front)
}

func TestPartialCreditBoundaries(t *testing.T) {
	t.Parallel()
	s := start(t)
	var cases []pcCase
	// result: 0 … the item's maximum on every item-result path; both sides of each end.
	for _, path := range []string{pathStandard, pathBayes, pathStrands, pathBayesStrands, pathAdaptive} {
		for _, r := range []int{0, 1, 2, maxLP00006} {
			cases = append(cases, pcCase{name: fmt.Sprintf("%s result %d", path, r), path: path, body: pcBody(path, r)})
		}
		for _, r := range []int{maxLP00006 + 1, -1, 100} {
			cases = append(cases, pcCase{name: fmt.Sprintf("%s result %d", path, r), path: path, body: pcBody(path, r),
				want: &problem{"items[1].result", fmt.Sprintf(msgLP00006, r)}})
		}
		// A dichotomous item keeps its message beside a polytomous one.
		cases = append(cases, pcCase{name: path + " dichotomous result 2", path: path, body: strings.Replace(pcBody(path, 3), `"L000001","result":1`, `"L000001","result":2`, 1),
			want: &problem{"items[0].result", "must be 0 or 1, got 2"}})
	}
	// numberCorrect counts points: LP00006 (3) + LP00001 (2) + L000001 (1) = 6.
	ids := `"items":[{"id":"LP00006"},{"id":"LP00001"},{"id":"L000001"}]`
	for _, c := range []struct {
		n    int
		want *problem
	}{
		{0, nil}, {3, nil}, {6, nil},
		{7, &problem{"", "numberCorrect (7) is more than the items' maximum score (6 points)"}},
		{-1, &problem{"numberCorrect", "must be 0 or more, got -1"}},
	} {
		cases = append(cases, pcCase{name: fmt.Sprintf("ids numberCorrect %d", c.n), path: pathIDs, body: fmt.Sprintf(`{%s,"numberCorrect":%d}`, ids, c.n), want: c.want})
	}
	// The form FORM-READ-G5-PC mixes dichotomous and polytomous items: its maximum is more than
	// its number of items.
	formItems, formMax := formScores(t, "FORM-READ-G5-PC")
	if formMax <= formItems {
		t.Fatalf("FORM-READ-G5-PC: %d items, %d points; want a form with partial credit items", formItems, formMax)
	}
	for _, c := range []struct {
		n    int
		want *problem
	}{
		{0, nil}, {formItems, nil}, {formMax, nil},
		{formMax + 1, &problem{"", fmt.Sprintf("numberCorrect (%d) is more than the items' maximum score (%d points)", formMax+1, formMax)}},
		{-1, &problem{"numberCorrect", "must be 0 or more, got -1"}},
	} {
		cases = append(cases, pcCase{name: fmt.Sprintf("form numberCorrect %d", c.n), path: pathForm, body: fmt.Sprintf(`{"formId":"FORM-READ-G5-PC","numberCorrect":%d}`, c.n), want: c.want})
	}
	// The difficulties path: 2 items of 3 steps and one dichotomous item: 7 points.
	diff := func(items string, n int) string {
		return fmt.Sprintf(`{"items":[%s],"numberCorrect":%d,"framework":"lexile",%s}`, items, n, pcPrior)
	}
	for _, c := range []struct {
		name, items string
		n           int
		want        *problem
	}{
		{"none", pcDifficultyItems, 0, nil},
		{"every point", pcDifficultyItems, 7, nil},
		{"a point too many", pcDifficultyItems, 8, &problem{"", "numberCorrect (8) is more than the items' maximum score (7 points)"}},
		{"fractional steps", `{"steps":[600.25,700.5]}`, 1, nil},
		{"disordered steps", `{"steps":[800,600]}`, 1, nil},
		{"one step", `{"steps":[700]}`, 1, nil},
		{"one step, a second point", `{"steps":[700]}`, 2, &problem{"", "numberCorrect (2) is more than the number of items (1)"}},
		{"both", `{"difficulty":700,"steps":[600,800]}`, 1, &problem{"items[0]", "has both difficulty and steps; give one: difficulty for an item scored right or wrong, steps for an item scored 0 … the number of steps"}},
		{"neither", `{"count":2}`, 1, &problem{"items[0].difficulty", "is required (or steps, for an item scored in more than two categories)"}},
		{"empty steps are none", `{"steps":[]}`, 1, &problem{"items[0].difficulty", "is required (or steps, for an item scored in more than two categories)"}},
		{"a step out of range", `{"steps":[600,10000.5]}`, 1, &problem{"items[0].steps[1]", "must be a number between -10000 and 10000, got 10000.5"}},
		{"a step at the limit", `{"steps":[-10000,10000]}`, 1, nil},
		{"a step not a number", `{"steps":[600,"NaN"]}`, 1, &problem{"items[0].steps[1]", "must be a number between -10000 and 10000, got NaN"}},
		{"an infinite step", `{"steps":["-Infinity",600]}`, 1, &problem{"items[0].steps[0]", "must be a number between -10000 and 10000, got -Inf"}},
		{"count 0 with steps", `{"steps":[600,800],"count":0}`, 0, &problem{"items[0].count", "must be 1 or more, got 0"}},
		{"5,000 steps in all", manySteps(50, 100, 0), 0, nil},
		{"5,001 steps in all", manySteps(50, 100, 1), 0, &problem{"items", "hold 5001 steps in all; the limit is 5000"}},
	} {
		cases = append(cases, pcCase{name: "difficulties " + c.name, path: pathDifficulties, body: diff(c.items, c.n), want: c.want})
	}
	cases = append(cases,
		pcCase{name: "difficulties steps not numbers", path: pathDifficulties, body: diff(`{"steps":[600,"high"]}`, 1), json: true,
			want: &problem{"items[0].steps[1]", `must be a number, got "high"`}},
		pcCase{name: "difficulties steps not a list", path: pathDifficulties, body: diff(`{"steps":700}`, 1), json: true,
			want: &problem{"items[0].steps", "must be an array"}},
	)
	methods := methodsByPath(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			checkJSONAnswer(t, r, tc.want)
			if tc.json {
				return
			}
			req := requestOf(t, methods[tc.path], []byte(tc.body))
			if req == nil {
				t.Fatalf("protojson cannot read %s", tc.body)
			}
			resp := newResponse(t, methods[tc.path])
			err := s.Conn.Invoke(s.Authed(context.Background()), methods[tc.path], req, resp)
			checkGRPCAnswer(t, resp, err, tc.want)
			if err == nil && r.Status == http.StatusOK {
				servetest.SameBytesAsProtojson(t, withVersion(resp, r.Body), r.Body)
			}
		})
	}
}

// formScores is the number of items of a demo form and its maximum score.
func formScores(t *testing.T, id string) (items, most int) {
	t.Helper()
	b := measure.Demo()
	form, ok := b.Form(id)
	if !ok {
		t.Fatalf("no demo form %s", id)
	}
	for _, item := range form.Items {
		it, ok := b.Item(item)
		if !ok {
			t.Fatalf("form %s: no item %s", id, item)
		}
		most += it.MaxScore()
	}
	return len(form.Items), most
}

// manySteps is n item objects of m steps each, and one more step on the last when extra is 1:
// the default item limit (5,000) holds the steps of a request too.
func manySteps(n, m, extra int) string {
	steps := make([]string, m)
	for k := range steps {
		steps[k] = strconv.Itoa(100 + 10*k)
	}
	one := `{"steps":[` + strings.Join(steps, ",") + `]}`
	items := strings.Repeat(one+",", n-1) + one
	if extra == 1 {
		items = strings.TrimSuffix(items, "]}") + ",2000]}"
	}
	return items
}

// checkJSONAnswer holds a JSON answer to want: 200, or a 400 whose validationErrors hold the
// problem keyed as the JSON front keys it.
func checkJSONAnswer(t *testing.T, r servetest.Response, want *problem) {
	t.Helper()
	if want == nil {
		if r.Status != http.StatusOK {
			t.Fatalf("JSON: got %d %s; want 200", r.Status, r.Body)
		}
		return
	}
	if r.Status != http.StatusBadRequest {
		t.Fatalf("JSON: got %d %s; want 400", r.Status, r.Body)
	}
	var e struct {
		ValidationErrors map[string][]string `json:"validationErrors"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatal(err)
	}
	key, msg := want.field, want.desc
	switch i := strings.IndexAny(want.field, ".["); {
	case want.field == "":
		key = "nonFieldErrors"
	case i > 0:
		key, msg = want.field[:i], want.field+": "+want.desc
	}
	for _, m := range e.ValidationErrors[key] {
		if m == msg {
			return
		}
	}
	t.Errorf("JSON: validationErrors %v; want %q under %q", e.ValidationErrors, msg, key)
}

// checkGRPCAnswer holds a gRPC answer to want: OK, or INVALID_ARGUMENT whose BadRequest has the
// violation under its full element path.
func checkGRPCAnswer(t *testing.T, resp proto.Message, err error, want *problem) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("gRPC: got %v; want OK", err)
		}
		return
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("gRPC: got %v %v; want InvalidArgument", resp, err)
	}
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				if v.GetField() == want.field && v.GetDescription() == want.desc {
					return
				}
			}
		}
	}
	t.Errorf("gRPC: %v; want violation %q: %q", status.Convert(err).Details(), want.field, want.desc)
}

// withVersion is a gRPC response with the JSON answer's apiVersion (both are the build's).
func withVersion(m proto.Message, body []byte) proto.Message {
	var v struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(body, &v)
	m = proto.Clone(m)
	r := m.ProtoReflect()
	if f := r.Descriptor().Fields().ByName("api_version"); f != nil && v.APIVersion != "" {
		r.Set(f, protoreflect.ValueOfString(v.APIVersion))
	}
	return m
}

// measureAnswer is the ability and uncertainty of a JSON measure answer.
type measureAnswer struct {
	Ability        int    `json:"ability"`
	Uncertainty    int    `json:"uncertainty"`
	AbilityDisplay string `json:"abilityDisplay"`
	Fit            *struct {
		Infit float64 `json:"infit"`
	} `json:"fit"`
	FitNote string `json:"fitNote"`
}

func decodeMeasure(t *testing.T, r servetest.Response) measureAnswer {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	var m measureAnswer
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPartialCreditAnswers: the answers count points. Each path's answer equals pkg/measure's
// estimate of the same points; the raw score of points is sufficient, so ids with a number
// correct answer as the item results with that total, and the difficulties path's steps as the
// bank's items; more points, a higher ability; one step is the dichotomous item bit for bit.
func TestPartialCreditAnswers(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := measure.Demo()
	fw, _ := b.Framework("lexile")
	bank := func(id string) measure.Item {
		it, ok := b.Item(id)
		if !ok {
			t.Fatalf("no demo item %s", id)
		}
		return it
	}
	pl6, pl1, l1, l2 := bank("LP00006"), bank("LP00001"), bank("L000001"), bank("L000002")
	if pl6.MaxScore() != 3 || pl1.MaxScore() != 2 || l1.MaxScore() != 1 {
		t.Fatalf("demo items changed: LP00006 %v, LP00001 %v", pl6.Steps, pl1.Steps)
	}

	t.Run("standard and Bayes are pkg/measure's estimates of the points", func(t *testing.T) {
		t.Parallel()
		prior := fw.Grow(measure.Normal{Mean: 900, SD: 150}, 0)
		last := math.MinInt
		for r := range maxLP00006 + 1 {
			answers := []measure.Answer{{Item: l1, Correct: true}, {Item: pl6, Score: r}, {Item: l2}}
			std, err := fw.Standard(measure.TestOf(answers))
			if err != nil {
				t.Fatal(err)
			}
			bay, err := fw.Bayes(measure.TestOf(answers), prior)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				path string
				want measure.Estimate
			}{{pathStandard, std}, {pathBayes, bay}} {
				got := decodeMeasure(t, s.Post(c.path, pcBody(c.path, r)))
				if got.Ability != measure.Round(c.want.Ability) || got.Uncertainty != measure.Round(c.want.Uncertainty) {
					t.Errorf("%s, LP00006 scored %d: got %d ± %d; want %d ± %d", c.path, r, got.Ability, got.Uncertainty, measure.Round(c.want.Ability), measure.Round(c.want.Uncertainty))
				}
			}
			got := decodeMeasure(t, s.Post(pathStandard, pcBody(pathStandard, r)))
			if got.Ability <= last {
				t.Errorf("LP00006 scored %d: ability %d; want above %d (one point fewer)", r, got.Ability, last)
			}
			last = got.Ability
		}
	})

	t.Run("ids with a number correct answer as results with that many points", func(t *testing.T) {
		t.Parallel()
		for total := 0; total <= 6; total++ {
			// LP00006 takes up to 3 points, then LP00001 up to 2, then L000001.
			r6, r1, rl := min(total, 3), min(max(total-3, 0), 2), max(total-5, 0)
			results := fmt.Sprintf(`{"items":[{"id":"LP00006","result":%d},{"id":"LP00001","result":%d},{"id":"L000001","result":%d}]}`, r6, r1, rl)
			ids := fmt.Sprintf(`{"items":[{"id":"LP00006"},{"id":"LP00001"},{"id":"L000001"}],"numberCorrect":%d}`, total)
			a, c := s.Post(pathStandard, results), s.Post(pathIDs, ids)
			if a.Status != http.StatusOK || !bytes.Equal(a.Body, c.Body) {
				t.Errorf("%d points: results %d %s; ids %d %s; want the same answer", total, a.Status, a.Body, c.Status, c.Body)
			}
		}
	})

	t.Run("steps on the difficulties path answer as the bank's item", func(t *testing.T) {
		t.Parallel()
		steps, _ := json.Marshal(pl6.Steps)
		for r := range maxLP00006 + 1 {
			diff := fmt.Sprintf(`{"items":[{"difficulty":%v},{"steps":%s},{"difficulty":%v}],"numberCorrect":%d,"framework":"lexile",%s}`, l1.Difficulty, steps, l2.Difficulty, 1+r, pcPrior)
			a, c := s.Post(pathDifficulties, diff), s.Post(pathBayes, pcBody(pathBayes, r))
			if a.Status != http.StatusOK || !bytes.Equal(a.Body, c.Body) {
				t.Errorf("LP00006 scored %d: difficulties %d %s; results %d %s; want the same answer", r, a.Status, a.Body, c.Status, c.Body)
			}
		}
	})

	t.Run("one step is the dichotomous item bit for bit", func(t *testing.T) {
		t.Parallel()
		for _, d := range []string{"700", "-131", "1234.5", "-10000"} {
			for n := range 3 {
				one := fmt.Sprintf(`{"items":[{"steps":[%s],"count":2},{"difficulty":500}],"numberCorrect":%d,"framework":"lexile",%s}`, d, n, pcPrior)
				plain := fmt.Sprintf(`{"items":[{"difficulty":%s,"count":2},{"difficulty":500}],"numberCorrect":%d,"framework":"lexile",%s}`, d, n, pcPrior)
				a, c := s.Post(pathDifficulties, one), s.Post(pathDifficulties, plain)
				if a.Status != http.StatusOK || !bytes.Equal(a.Body, c.Body) {
					t.Errorf("step %s, %d correct: %d %s; difficulty: %d %s", d, n, a.Status, a.Body, c.Status, c.Body)
				}
				// And over gRPC: the same response, field for field.
				var answers [2]*scoringv1.Measure
				for k, body := range []string{one, plain} {
					req := new(scoringv1.ScoreDifficultiesBayesRequest)
					if err := jsonToProto(body, req); err != nil {
						t.Fatal(err)
					}
					var err error
					if answers[k], err = scoringv1.NewScoringServiceClient(s.Conn).ScoreDifficultiesBayes(s.Authed(context.Background()), req); err != nil {
						t.Fatal(err)
					}
				}
				if !proto.Equal(answers[0], answers[1]) {
					t.Errorf("gRPC, step %s, %d correct: %v; difficulty: %v", d, n, answers[0], answers[1])
				}
			}
		}
	})

	t.Run("a form's number correct counts points", func(t *testing.T) {
		t.Parallel()
		form, ok := b.Form("FORM-READ-G5-PC")
		if !ok {
			t.Fatal("no FORM-READ-G5-PC")
		}
		var items []measure.Difficulty
		for _, id := range form.Items {
			it := bank(id)
			d := measure.Difficulty{Measure: it.Difficulty, Count: 1}
			if it.Polytomous() {
				d.Steps = it.Steps
			}
			items = append(items, d)
		}
		_, most := formScores(t, "FORM-READ-G5-PC")
		for _, n := range []int{0, 1, 17, most - 1, most} {
			want, err := fw.Standard(measure.Test{Items: items, Correct: n})
			if err != nil {
				t.Fatal(err)
			}
			got := decodeMeasure(t, s.Post(pathForm, fmt.Sprintf(`{"formId":"FORM-READ-G5-PC","numberCorrect":%d}`, n)))
			if got.Ability != measure.Round(want.Ability) || got.Uncertainty != measure.Round(want.Uncertainty) {
				t.Errorf("%d points: got %d ± %d; want %d ± %d", n, got.Ability, got.Uncertainty, measure.Round(want.Ability), measure.Round(want.Uncertainty))
			}
		}
	})

	t.Run("strands score each strand's points", func(t *testing.T) {
		t.Parallel()
		// LP00006 and LP00001 are Vocabulary items: their points move that strand.
		body := func(r6, r1 int) string {
			return fmt.Sprintf(`{%s,"grade":5,"timeOfYear":"MOY","items":[{"id":"LP00006","result":%d},{"id":"LP00001","result":%d},{"id":"L000001","result":1}]}`, pcPrior, r6, r1)
		}
		vocabulary := func(r servetest.Response) int {
			var m struct {
				Strands []struct {
					Name    string `json:"name"`
					Ability int    `json:"ability"`
				} `json:"strands"`
			}
			if r.Status != http.StatusOK || json.Unmarshal(r.Body, &m) != nil {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			for _, st := range m.Strands {
				if st.Name == "Vocabulary" {
					return st.Ability
				}
			}
			t.Fatalf("no Vocabulary strand in %s", r.Body)
			return 0
		}
		low, high := vocabulary(s.Post(pathBayesStrands, body(0, 0))), vocabulary(s.Post(pathBayesStrands, body(3, 2)))
		if high <= low {
			t.Errorf("Vocabulary with every point %d; with none %d; want higher", high, low)
		}
	})

	t.Run("person fit of points, and why a perfect score of points has none", func(t *testing.T) {
		t.Parallel()
		fitBody := func(r6, r1, rl int) string {
			return fmt.Sprintf(`{"fit":true,"items":[{"id":"LP00006","result":%d},{"id":"LP00001","result":%d},{"id":"L000001","result":%d},{"id":"L000002","result":%d}]}`, r6, r1, rl, rl)
		}
		m := decodeMeasure(t, s.Post(pathStandard, fitBody(2, 1, 1)))
		answers := []measure.Answer{{Item: pl6, Score: 2}, {Item: pl1, Score: 1}, {Item: l1, Score: 1}, {Item: l2, Score: 1}}
		est, err := fw.Standard(measure.TestOf(answers))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := fw.PersonFit(est.Ability, answers)
		if err != nil {
			t.Fatal(err)
		}
		if m.Fit == nil || m.Fit.Infit != pf.Infit {
			t.Errorf("fit %+v; want infit %v", m.Fit, pf.Infit)
		}
		for _, c := range []struct {
			r6, r1, rl int
			note       string
		}{{3, 2, 1, noFitPerfectPoints}, {0, 0, 0, noFitZeroPoints}} {
			if m := decodeMeasure(t, s.Post(pathStandard, fitBody(c.r6, c.r1, c.rl))); m.Fit != nil || m.FitNote != c.note {
				t.Errorf("%d, %d, %d: fit %+v note %q; want note %q", c.r6, c.r1, c.rl, m.Fit, m.FitNote, c.note)
			}
		}
	})
}

// TestPartialCreditAdaptive: next carries maxScore on both fronts: the polytomous item's number
// of steps, 1 for a dichotomous item.
func TestPartialCreditAdaptive(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		name, body string
		id         string
		maxScore   int32
	}{
		{"a polytomous item of 3 steps", `{"framework":"lexile","pool":["LP00006"]}`, "LP00006", 3},
		{"a polytomous item of 2 steps", `{"framework":"quantile","pool":["QP00001"]}`, "QP00001", 2},
		{"a dichotomous item", `{"framework":"lexile","pool":["L000001"]}`, "L000001", 1},
		{"after a polytomous answer", `{"framework":"lexile","items":[{"id":"LP00006","result":2}],"pool":["LP00006","LP00001"]}`, "LP00001", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(pathAdaptive, tc.body)
			var got struct {
				Next *struct {
					ID       string `json:"id"`
					MaxScore int32  `json:"maxScore"`
				} `json:"next"`
			}
			if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || got.Next == nil {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if got.Next.ID != tc.id || got.Next.MaxScore != tc.maxScore {
				t.Errorf("JSON next %+v; want %s with maxScore %d", *got.Next, tc.id, tc.maxScore)
			}
			req := new(scoringv1.NextItemRequest)
			if err := jsonToProto(tc.body, req); err != nil {
				t.Fatal(err)
			}
			resp, err := scoringv1.NewScoringServiceClient(s.Conn).NextItem(s.Authed(context.Background()), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetNext().GetId() != tc.id || resp.GetNext().GetMaxScore() != tc.maxScore {
				t.Errorf("gRPC next %v; want %s with maxScore %d", resp.GetNext(), tc.id, tc.maxScore)
			}
		})
	}
}

// TestPartialCreditBatches: batch records with partial credit over NDJSON and gRPC are answered
// as the unary calls: answers and refusals alike.
func TestPartialCreditBatches(t *testing.T) {
	t.Parallel()
	s := start(t)
	var reqs []servetest.Request
	for _, path := range []string{pathStandard, pathBayes, pathStrands, pathBayesStrands, pathAdaptive} {
		for _, r := range []int{0, 2, maxLP00006, maxLP00006 + 1, -1} {
			reqs = append(reqs, servetest.Request{Path: path, Body: []byte(pcBody(path, r))})
		}
	}
	_, formMax := formScores(t, "FORM-READ-G5-PC")
	for _, n := range []int{0, formMax, formMax + 1} {
		reqs = append(reqs, servetest.Request{Path: pathForm, Body: fmt.Appendf(nil, `{"formId":"FORM-READ-G5-PC","numberCorrect":%d}`, n)})
		reqs = append(reqs, servetest.Request{Path: pathDifficulties, Body: fmt.Appendf(nil, `{"items":[%s],"numberCorrect":%d,"framework":"lexile",%s}`, pcDifficultyItems, n%9, pcPrior)})
		reqs = append(reqs, servetest.Request{Path: pathIDs, Body: fmt.Appendf(nil, `{"items":[{"id":"QP00006"},{"id":"Q000001"}],"numberCorrect":%d}`, n%6)})
	}
	unary := s.Unary(reqs)
	statuses := map[int]int{}
	for _, u := range unary {
		statuses[u.Status]++
	}
	if statuses[200] < len(reqs)/2 || statuses[400] < len(reqs)/5 {
		t.Fatalf("the requests do not mix answers and refusals: %v", statuses)
	}
	batch := s.Batch("/api/score/batch", string(servetest.BatchBody(reqs)))
	answers, _ := servetest.ParseBatch(t, batch.Body)
	if batch.Status != http.StatusOK || len(answers) != len(reqs) {
		t.Fatalf("NDJSON batch: %d, %d answers for %d records", batch.Status, len(answers), len(reqs))
	}
	for i, a := range answers {
		if a.Status != unary[i].Status || !bytes.Equal(a.Body, bytes.TrimRight(unary[i].Body, "\n")) {
			t.Errorf("NDJSON record %d %s: %d %s; unary %d %s", i, reqs[i].Body, a.Status, a.Body, unary[i].Status, unary[i].Body)
		}
	}
	recs := servetest.GRPCRecords(t, reqs)
	if len(recs) != len(reqs) {
		t.Fatalf("%d of %d requests are gRPC records", len(recs), len(reqs))
	}
	records := make([]proto.Message, len(recs))
	for i, r := range recs {
		records[i] = servetest.RecordOf(t, scoringv1.ScoringService_ScoreBatch_FullMethodName, "r"+strconv.Itoa(i), r)
	}
	ctx := s.Authed(context.Background())
	got, _, err := s.GRPCBatch(ctx, scoringv1.ScoringService_ScoreBatch_FullMethodName, records)
	if err != nil || len(got) != len(recs) {
		t.Fatalf("ScoreBatch: %v, %d answers for %d records", err, len(got), len(recs))
	}
	for i, r := range recs {
		want := newResponse(t, r.Method)
		wantErr := s.Conn.Invoke(ctx, r.Method, r.Request, want)
		_, resp, gotErr := servetest.AnswerOf(got[i])
		switch {
		case (wantErr == nil) != (gotErr == nil):
			t.Errorf("gRPC record %d: %v %v; unary %v %v", i, resp, gotErr, want, wantErr)
		case wantErr != nil && !servetest.SameStatus(gotErr, wantErr):
			t.Errorf("gRPC record %d: %v; unary %v", i, gotErr, wantErr)
		case wantErr == nil && !proto.Equal(resp, want):
			t.Errorf("gRPC record %d: %v; unary %v", i, resp, want)
		}
		if (wantErr == nil) != (unary[i].Status == http.StatusOK) {
			t.Errorf("record %d: gRPC %v, JSON %d", i, wantErr, unary[i].Status)
		}
	}
}

// TestPartialCreditIDsBayes: /api/score/items/ids/bayes takes ids starting with Q, L or S only;
// a bundle whose partial credit items have such ids (S… here, beside the demonstration bundle's
// LP…/QP…) scores them there like the other item paths: the points are the number correct, up to
// the items' maximum score, on both fronts.
func TestPartialCreditIDsBayes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, measure.DemoFiles()); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "items.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("L900001,lexile,Vocabulary,700,600;700;800\nS900001,lexile,Key Ideas,900,850;950\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	const prior = `"priorAbility":800,"priorUncertainty":120,"elapsedDays":30`
	c := scoringv1.NewScoringServiceClient(s.Conn)
	// L900001 (0–3) + S900001 (0–2) + L000001 (0–1): 6 points.
	for n := -1; n <= 7; n++ {
		body := fmt.Sprintf(`{"items":[{"id":"L900001"},{"id":"S900001"},{"id":"L000001"}],"numberCorrect":%d,%s}`, n, prior)
		var want *problem
		switch {
		case n < 0:
			want = &problem{"numberCorrect", "must be 0 or more, got -1"}
		case n > 6:
			want = &problem{"", fmt.Sprintf("numberCorrect (%d) is more than the items' maximum score (6 points)", n)}
		}
		r := s.Post("/api/score/items/ids/bayes", body)
		checkJSONAnswer(t, r, want)
		req := new(scoringv1.ScoreItemIdsBayesRequest)
		if err := jsonToProto(body, req); err != nil {
			t.Fatal(err)
		}
		resp, err := c.ScoreItemIdsBayes(s.Authed(context.Background()), req)
		checkGRPCAnswer(t, resp, err, want)
		if want != nil {
			continue
		}
		servetest.SameBytesAsProtojson(t, withVersion(resp, r.Body), r.Body)
		r3, r2 := min(n, 3), min(max(n-3, 0), 2)
		results := fmt.Sprintf(`{"items":[{"id":"L900001","result":%d},{"id":"S900001","result":%d},{"id":"L000001","result":%d}],%s}`, r3, r2, max(n-5, 0), prior)
		if a := s.Post(pathBayes, results); a.Status != http.StatusOK || !bytes.Equal(a.Body, r.Body) {
			t.Errorf("%d points: ids %s; results %d %s; want the same answer", n, r.Body, a.Status, a.Body)
		}
	}
}
