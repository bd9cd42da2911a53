package forecast

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

const planPath = "/api/forecast/plan"

type planPointBody struct {
	Grade          *int    `json:"grade"`
	TimeOfYear     string  `json:"timeOfYear"`
	ElapsedDays    float64 `json:"elapsedDays"`
	Ability        float64 `json:"ability"`
	AbilityDisplay string  `json:"abilityDisplay"`
	Uncertainty    float64 `json:"uncertainty"`
	Probability    float64 `json:"probability"`
}

type planBody struct {
	Trajectory []planPointBody `json:"trajectory"`
	Reach      *planPointBody  `json:"reach"`
	Framework  string          `json:"framework"`
}

// TestPlanEqualsForecasts: every point of a plan, and its reach, is the single forecast of its
// day on the same service (ability, uncertainty, the last band's probability with the target as
// the one cut, to the last bit as JSON numbers), and the reach is the first whole day whose
// forecast reaches the probability asked: the day before it does not.
func TestPlanEqualsForecasts(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, c := range []struct {
		name, body, forecastPath string
		wantReach                bool
	}{
		{"reading, reached", `{"framework":"lexile","priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":900,"testUncertainty":32.5}`, "/api/forecast/reading", true},
		{"math, probability 0.6, any case", `{"framework":"Quantile","priorAbility":600,"priorUncertainty":45,"grade":4,"timeOfYear":"boy","target":760,"probability":0.6,"horizonDays":1200}`, "/api/forecast/math", true},
		{"never reached", `{"framework":"lexile","priorAbility":300,"priorUncertainty":40,"grade":2,"timeOfYear":"EOY","target":1700,"probability":0.9,"horizonDays":700}`, "/api/forecast/reading", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(planPath, c.body)
			var got planBody
			if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
				t.Fatalf("got %d %s; want 200", r.Status, r.Body)
			}
			if !strings.Contains(string(r.Body), `"reach":`) {
				t.Errorf("reach is absent; want it always present (null when not reached): %s", r.Body)
			}
			var req struct {
				PriorAbility, PriorUncertainty, Target, TestUncertainty float64
				Probability                                             *float64
			}
			if err := json.Unmarshal([]byte(c.body), &req); err != nil {
				t.Fatal(err)
			}
			want := 0.5
			if req.Probability != nil {
				want = *req.Probability
			}
			forecast := func(days float64) forecastBody {
				t.Helper()
				body := fmt.Sprintf(`{"priorAbility":%v,"priorUncertainty":%v,"testUncertainty":%v,"elapsedDays":%v,"cutLevels":[%v]}`,
					req.PriorAbility, req.PriorUncertainty, req.TestUncertainty, days, req.Target)
				fr := s.Post(c.forecastPath, body)
				var f forecastBody
				if fr.Status != 200 || json.Unmarshal(fr.Body, &f) != nil {
					t.Fatalf("forecast %s: got %d %s", body, fr.Status, fr.Body)
				}
				return f
			}
			if len(got.Trajectory) == 0 {
				t.Fatal("empty trajectory")
			}
			for i, p := range got.Trajectory {
				f := forecast(p.ElapsedDays)
				if p.Ability != f.Ability || p.Uncertainty != f.Uncertainty || p.Probability != f.Probabilities[1] {
					t.Errorf("point %d (day %v): got (%v, %v, %v); want the forecast's (%v, %v, %v)", i, p.ElapsedDays,
						p.Ability, p.Uncertainty, p.Probability, f.Ability, f.Uncertainty, f.Probabilities[1])
				}
				if p.Grade == nil || (p.TimeOfYear != "MOY" && p.TimeOfYear != "EOY") {
					t.Errorf("point %d: grade %v, timeOfYear %q; want a grade and MOY or EOY", i, p.Grade, p.TimeOfYear)
				}
			}
			if !c.wantReach {
				if got.Reach != nil {
					t.Errorf("got reach %+v; want null", got.Reach)
				}
				return
			}
			if got.Reach == nil {
				t.Fatalf("got no reach; want one: %s", r.Body)
			}
			f := forecast(got.Reach.ElapsedDays)
			if got.Reach.Ability != f.Ability || got.Reach.Uncertainty != f.Uncertainty || got.Reach.Probability != f.Probabilities[1] || got.Reach.AbilityDisplay != f.AbilityDisplay {
				t.Errorf("reach: got %+v; want the forecast of its day %+v", *got.Reach, f)
			}
			if got.Reach.Probability < want {
				t.Errorf("reach probability %v < %v asked", got.Reach.Probability, want)
			}
			if d := got.Reach.ElapsedDays; d > 0 {
				if before := forecast(d - 1).Probabilities[1]; before >= want {
					t.Errorf("day %v before the reach already has probability %v ≥ %v", d-1, before, want)
				}
			}
		})
	}
}

// TestPlanGolden pins a plan's bytes on the JSON front, and the gRPC answer to the same.
func TestPlanGolden(t *testing.T) {
	t.Parallel()
	s := start(t)
	const body = `{"framework":"lexile","priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":900,"testUncertainty":32.5,"horizonDays":1826}`
	r := s.Post(planPath, body)
	if r.Status != 200 {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	servetest.Golden(t, filepath.Join("testdata", "plan.json"), r, *update)
	req := new(forecastv1.PlanRequest)
	if err := protojson.Unmarshal([]byte(body), req); err != nil {
		t.Fatal(err)
	}
	msg, err := forecastv1.NewForecastServiceClient(s.Conn).Plan(s.Authed(context.Background()), req)
	if err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	servetest.SameBytesAsProtojson(t, msg, r.Body)
}

// TestPlanRefusals: every field's rule, both sides of each bound, all problems at once.
func TestPlanRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	base := map[string]any{"framework": "lexile", "priorAbility": 520, "priorUncertainty": 60, "grade": 3, "timeOfYear": "MOY", "target": 900}
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
		name, body, field, msg string // field "" = accepted
	}{
		{"horizonDays 1 accepted", with("horizonDays", 1), "", ""},
		{"horizonDays 3653 accepted", with("horizonDays", 3653), "", ""},
		{"horizonDays 0 refused", with("horizonDays", 0), "horizonDays", "must be between 1 and 3653, got 0"},
		{"horizonDays 3654 refused", with("horizonDays", 3654), "horizonDays", "must be between 1 and 3653, got 3654"},
		{"probability just above 0 accepted", with("probability", 1e-300), "", ""},
		{"probability just below 1 accepted", with("probability", 0.9999999999999999), "", ""},
		{"probability 0 refused", with("probability", 0), "probability", "must be strictly between 0 and 1, got 0"},
		{"probability 1 refused", with("probability", 1), "probability", "must be strictly between 0 and 1, got 1"},
		{"grade 0 accepted", with("grade", 0), "", ""},
		{"grade 12 accepted", with("grade", 12), "", ""},
		{"grade 13 refused", with("grade", 13), "grade", "must be between 0 (Kindergarten) and 12, got 13"},
		{"grade -1 refused", with("grade", -1), "grade", "must be between 0 (Kindergarten) and 12, got -1"},
		{"grade missing", with("grade", nil), "grade", "is required (0 for Kindergarten to 12): the grade the measure was taken in"},
		{"timeOfYear eoy accepted", with("timeOfYear", "eoy"), "", ""},
		{"timeOfYear wrong", with("timeOfYear", "SPRING"), "timeOfYear", `must be BOY, MOY or EOY, got "SPRING"`},
		{"timeOfYear missing", with("timeOfYear", nil), "timeOfYear", "is required (BOY, MOY or EOY): when in the year the measure was taken"},
		{"target missing", with("target", nil), "target", "is required (the measure to reach)"},
		{"target 10000 accepted", with("target", 10000), "", ""},
		{"target 10001 refused", with("target", 10001), "target", "must be a number between -10000 and 10000, got 10001"},
		{"framework missing", with("framework", nil), "framework", "is required (lexile or quantile)"},
		{"framework unknown", with("framework", "klingon"), "framework", `unknown framework "klingon" (want lexile or quantile)`},
		{"priorAbility missing", with("priorAbility", nil), "priorAbility", "is required"},
		{"priorUncertainty 0 refused", with("priorUncertainty", 0), "priorUncertainty", "must be greater than 0 and at most 10000, got 0"},
		{"testUncertainty 0 accepted", with("testUncertainty", 0), "", ""},
		{"testUncertainty -1 refused", with("testUncertainty", -1), "testUncertainty", "must be between 0 and 10000, got -1"},
		{"unknown field", with("horizonDay", 10), "horizonDay", `unknown field "horizonDay"; did you mean "horizonDays"?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(planPath, c.body)
			if c.field == "" {
				if r.Status != 200 {
					t.Errorf("got %d %s; want 200", r.Status, r.Body)
				}
				return
			}
			got := badRequest(t, r)
			if len(got[c.field]) != 1 || got[c.field][0] != c.msg {
				t.Errorf("validationErrors[%s] = %v; want [%q] (all: %v)", c.field, got[c.field], c.msg, got)
			}
		})
	}
	t.Run("everything at once", func(t *testing.T) {
		t.Parallel()
		got := badRequest(t, s.Post(planPath, `{"probability":1,"horizonDays":0}`))
		for _, f := range []string{"framework", "priorAbility", "priorUncertainty", "grade", "timeOfYear", "target", "probability", "horizonDays"} {
			if len(got[f]) != 1 {
				t.Errorf("validationErrors[%s] = %v; want one problem", f, got[f])
			}
		}
	})
	t.Run("gRPC names the fields", func(t *testing.T) {
		t.Parallel()
		_, err := forecastv1.NewForecastServiceClient(s.Conn).Plan(s.Authed(context.Background()), &forecastv1.PlanRequest{
			Framework: ptr("lexile"), PriorAbility: ptr(500.0), PriorUncertainty: ptr(50.0), Grade: ptr(int32(3)), TimeOfYear: ptr("MOY"),
			Target: ptr(900.0), HorizonDays: ptr(int32(3654))})
		code, fields := fieldViolations(err)
		if code != codes.InvalidArgument || !fields["horizonDays"] || len(fields) != 1 {
			t.Errorf("got %v %v; want InvalidArgument naming horizonDays", code, fields)
		}
	})
}

// TestPlanEveryProblemAtOnce: a target of the wrong type does not hide a framework missing, on
// the unary path and in a batch record.
func TestPlanEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	s := start(t)
	const body = `{"priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":"900L"}`
	want := map[string][]string{"framework": {"is required (lexile or quantile)"}, "target": {`must be a number, got "900L"`}}
	if got := badRequest(t, s.Post(planPath, body)); !reflect.DeepEqual(got, want) {
		t.Errorf("unary: got %q; want %q", got, want)
	}
	b := s.Batch("/api/forecast/batch", `{"id":"p","path":"`+planPath+`","body":`+body+"}\n")
	answers, _ := servetest.ParseBatch(t, b.Body)
	if len(answers) != 1 {
		t.Fatalf("batch: got %s; want one answer", b.Body)
	}
	if got := badRequest(t, servetest.Response{Status: answers[0].Status, Body: answers[0].Body}); !reflect.DeepEqual(got, want) {
		t.Errorf("batch record: got %q; want %q", got, want)
	}
}

// TestPlanReachWindowAndPeak: the reach names the school window of its day (none past grade 12),
// and the peak is there whether the target is reached or not.
func TestPlanReachWindowAndPeak(t *testing.T) {
	t.Parallel()
	s := start(t)
	type answer struct {
		Reach map[string]any `json:"reach"`
		Peak  *struct {
			ElapsedDays *float64 `json:"elapsedDays"`
			Probability *float64 `json:"probability"`
		} `json:"peak"`
	}
	for _, tc := range []struct {
		name, body string
		reached    bool
		window     []any // grade, timeOfYear; nil: absent
	}{
		{"reached in grade 7's middle", `{"framework":"lexile","priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":900}`, true, []any{7.0, "MOY"}},
		{"never reached: the peak says how close", `{"framework":"lexile","priorAbility":300,"priorUncertainty":40,"grade":2,"timeOfYear":"BOY","target":1900,"horizonDays":365}`, false, nil},
		{"reached after grade 12: no window", `{"framework":"lexile","priorAbility":1105,"priorUncertainty":20,"grade":12,"timeOfYear":"EOY","target":1120,"probability":0.6,"horizonDays":3653}`, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(planPath, tc.body)
			var a answer
			if r.Status != 200 || json.Unmarshal(r.Body, &a) != nil {
				t.Fatalf("got %d %s; want 200", r.Status, r.Body)
			}
			if a.Peak == nil || a.Peak.ElapsedDays == nil || a.Peak.Probability == nil {
				t.Fatalf("peak: got %s; want {elapsedDays, probability}", r.Body)
			}
			if (a.Reach != nil) != tc.reached {
				t.Fatalf("reach: got %v; want reached %v", a.Reach, tc.reached)
			}
			if !tc.reached {
				if *a.Peak.Probability >= 0.5 {
					t.Errorf("peak probability %v; want under the 0.5 never reached", *a.Peak.Probability)
				}
				return
			}
			if p := a.Reach["probability"].(float64); *a.Peak.Probability < p {
				t.Errorf("peak probability %v; want at least the reach's %v", *a.Peak.Probability, p)
			}
			g, hasG := a.Reach["grade"]
			toy, hasT := a.Reach["timeOfYear"]
			if tc.window == nil {
				if hasG || hasT {
					t.Errorf("reach: got grade %v timeOfYear %v; want neither past grade 12", g, toy)
				}
				return
			}
			if g != tc.window[0] || toy != tc.window[1] {
				t.Errorf("reach window: got %v %v; want %v %v", g, toy, tc.window[0], tc.window[1])
			}
		})
	}
}
