package forecast

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func start(t testing.TB) *servetest.Server {
	t.Helper()
	return servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
}

const (
	single = `{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800]}`
	group  = `{"studentData":[{"priorAbility":640,"priorUncertainty":70,"elapsedDays":180},[420,55,90],{"priorAbility":900,"priorUncertainty":40,"elapsedDays":365}],"testUncertainty":32.5,"cutLevels":[500,650,800]}`
)

func TestGolden(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := forecastv1.NewForecastServiceClient(s.Conn)
	for _, tc := range []struct {
		name, path, body string
		grpc             func(context.Context, string) (any, error)
	}{
		{"reading", "/api/forecast/reading", single, func(ctx context.Context, body string) (any, error) {
			req := new(forecastv1.ForecastRequest)
			if err := protojson.Unmarshal([]byte(body), req); err != nil {
				return nil, err
			}
			return client.ForecastReading(ctx, req)
		}},
		{"reading-group", "/api/forecast/reading/group", group, nil},
		{"math", "/api/forecast/math", single, func(ctx context.Context, body string) (any, error) {
			req := new(forecastv1.ForecastRequest)
			if err := protojson.Unmarshal([]byte(body), req); err != nil {
				return nil, err
			}
			return client.ForecastMath(ctx, req)
		}},
		{"math-group", "/api/forecast/math/group", group, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != 200 {
				t.Fatalf("got %d %s; want 200", r.Status, r.Body)
			}
			servetest.Golden(t, filepath.Join("testdata", tc.name+".json"), r, *update)
			if tc.grpc == nil {
				var answer forecastv1.GroupForecastResponse
				if err := protojson.Unmarshal(r.Body, &answer); err != nil {
					t.Fatal(err)
				}
				servetest.SameBytesAsProtojson(t, &answer, r.Body)
				return
			}
			msg, err := tc.grpc(s.Authed(context.Background()), tc.body)
			if err != nil {
				t.Fatalf("gRPC: %v", err)
			}
			b, _ := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(msg.(*forecastv1.Forecast))
			servetest.SameJSON(t, "gRPC and JSON answers", b, r.Body)
			servetest.SameBytesAsProtojson(t, msg.(*forecastv1.Forecast), r.Body)
		})
	}
}

type forecastBody struct {
	Ability        float64   `json:"ability"`
	AbilityDisplay string    `json:"abilityDisplay"`
	Uncertainty    float64   `json:"uncertainty"`
	Probabilities  []float64 `json:"probabilities"`
	Framework      string    `json:"framework"`
}

type groupBody struct {
	Forecasts struct {
		Students []forecastBody `json:"students"`
		Group    struct {
			GroupAbility     float64   `json:"groupAbility"`
			GroupUncertainty float64   `json:"groupUncertainty"`
			Proportions      []float64 `json:"GroupProportionPerLevel"`
			StdErrs          []float64 `json:"groupStderrPerLevel"`
		} `json:"group"`
	} `json:"forecasts"`
	Framework string `json:"framework"`
}

func decode(t *testing.T, r servetest.Response, v any) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("got %d %s; want 200", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatal(err)
	}
}

func sum(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	return s
}

func TestForecastsFollowTheMethod(t *testing.T) {
	t.Parallel()
	s := start(t)

	t.Run("probabilities: one per band, each in [0,1], summing to 1", func(t *testing.T) {
		var f forecastBody
		decode(t, s.Post("/api/forecast/reading", single), &f)
		if len(f.Probabilities) != 4 || math.Abs(sum(f.Probabilities)-1) > 1e-12 {
			t.Errorf("got %v; want 4 probabilities summing to 1", f.Probabilities)
		}
		for _, p := range f.Probabilities {
			if p < 0 || p > 1 {
				t.Errorf("probability %v outside [0,1]", p)
			}
		}
		if f.Framework != "lexile" || !strings.HasSuffix(f.AbilityDisplay, "L") {
			t.Errorf("reading forecast: got %s %s; want lexile", f.Framework, f.AbilityDisplay)
		}
	})
	t.Run("more elapsed time widens the forecast and grows the mean", func(t *testing.T) {
		var near, far forecastBody
		decode(t, s.Post("/api/forecast/reading", `{"priorAbility":640,"priorUncertainty":70,"testUncertainty":30,"elapsedDays":30,"cutLevels":[700]}`), &near)
		decode(t, s.Post("/api/forecast/reading", `{"priorAbility":640,"priorUncertainty":70,"testUncertainty":30,"elapsedDays":300,"cutLevels":[700]}`), &far)
		if far.Uncertainty <= near.Uncertainty || far.Ability < near.Ability {
			t.Errorf("30 days %+v; 300 days %+v; want wider and not lower", near, far)
		}
	})
	t.Run("group: students in input order, equal to individual forecasts", func(t *testing.T) {
		var g groupBody
		decode(t, s.Post("/api/forecast/reading/group", group), &g)
		students := [][3]float64{{640, 70, 180}, {420, 55, 90}, {900, 40, 365}}
		if len(g.Forecasts.Students) != len(students) {
			t.Fatalf("got %d students; want %d", len(g.Forecasts.Students), len(students))
		}
		mean := 0.0
		for i, st := range students {
			var f forecastBody
			decode(t, s.Post("/api/forecast/reading", fmt.Sprintf(`{"priorAbility":%v,"priorUncertainty":%v,"elapsedDays":%v,"testUncertainty":32.5,"cutLevels":[500,650,800]}`, st[0], st[1], st[2])), &f)
			got := g.Forecasts.Students[i]
			if math.Abs(got.Ability-f.Ability) > 1e-9 || math.Abs(got.Uncertainty-f.Uncertainty) > 1e-9 || !reflect.DeepEqual(got.Probabilities, f.Probabilities) {
				t.Errorf("student %d: group %+v; individual %+v", i, got, f)
			}
			mean += f.Ability / float64(len(students))
		}
		if math.Abs(g.Forecasts.Group.GroupAbility-mean) > 1e-9 {
			t.Errorf("groupAbility %v; want the mean %v", g.Forecasts.Group.GroupAbility, mean)
		}
		if math.Abs(sum(g.Forecasts.Group.Proportions)-1) > 1e-12 || len(g.Forecasts.Group.StdErrs) != 4 {
			t.Errorf("group proportions %v, stderrs %v; want 4 each, proportions summing to 1", g.Forecasts.Group.Proportions, g.Forecasts.Group.StdErrs)
		}
	})
	t.Run("array and object entries are the same student", func(t *testing.T) {
		a := s.Post("/api/forecast/reading/group", `{"studentData":[[420,55,90]],"testUncertainty":10,"cutLevels":[500]}`)
		o := s.Post("/api/forecast/reading/group", `{"studentData":[{"priorAbility":420,"priorUncertainty":55,"elapsedDays":90}],"testUncertainty":10,"cutLevels":[500]}`)
		if !reflect.DeepEqual(a.JSON(t), o.JSON(t)) {
			t.Errorf("array %s; object %s; want equal", a.Body, o.Body)
		}
	})
	// docs/method.md §4: above the top of the norm curve growth follows the grade 11→12 line (35Q a
	// year; PCHIP's end derivative gave 1.5Q), and a prior SD above the population SD (300) stays
	// as given (it used to become 300).
	t.Run("beyond the norm curve and with a vague prior", func(t *testing.T) {
		var f forecastBody
		decode(t, s.Post("/api/forecast/math", `{"priorAbility":1100,"priorUncertainty":500,"testUncertainty":30,"elapsedDays":730,"cutLevels":[1100]}`), &f)
		if want := 1100 + 35*730/365.25; math.Abs(f.Ability-want) > 1e-9 {
			t.Errorf("ability: got %v; want %v", f.Ability, want)
		}
		if want := math.Sqrt(500*500 + 30*30); math.Abs(f.Uncertainty-want) > 1e-9 {
			t.Errorf("uncertainty: got %v; want %v", f.Uncertainty, want)
		}
		var low, high forecastBody
		decode(t, s.Post("/api/forecast/math", `{"priorAbility":1050,"priorUncertainty":50,"testUncertainty":30,"elapsedDays":1000,"cutLevels":[1100]}`), &low)
		decode(t, s.Post("/api/forecast/math", `{"priorAbility":1100,"priorUncertainty":50,"testUncertainty":30,"elapsedDays":1000,"cutLevels":[1100]}`), &high)
		if gap := high.Ability - low.Ability; gap < 25 {
			t.Errorf("after 1,000 days 1100Q → %v and 1050Q → %v are %vQ apart; want at least 25Q", high.Ability, low.Ability, gap)
		}
	})
	t.Run("math forecasts are quantile", func(t *testing.T) {
		var f forecastBody
		decode(t, s.Post("/api/forecast/math", single), &f)
		if f.Framework != "quantile" || !strings.HasSuffix(f.AbilityDisplay, "Q") {
			t.Errorf("got %s %s; want quantile", f.Framework, f.AbilityDisplay)
		}
	})
}

func TestValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		name, path, body string
		fields           []string
	}{
		{"all missing", "/api/forecast/reading", `{}`, []string{"priorAbility", "priorUncertainty", "testUncertainty", "elapsedDays", "cutLevels"}},
		{"cut levels not ascending", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":10,"elapsedDays":10,"cutLevels":[500,500,700]}`, []string{"cutLevels[1]"}},
		{"cut level not finite", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":10,"elapsedDays":10,"cutLevels":[500,"NaN"]}`, []string{"cutLevels[1]"}},
		{"too many cut levels", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":10,"elapsedDays":10,"cutLevels":[` + strings.TrimSuffix(strings.Repeat("1,", 21), ",") + `]}`, []string{"cutLevels"}},
		{"negative test uncertainty", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":-1,"elapsedDays":10,"cutLevels":[500]}`, []string{"testUncertainty"}},
		{"prior uncertainty zero", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":0,"testUncertainty":1,"elapsedDays":10,"cutLevels":[500]}`, []string{"priorUncertainty"}},
		{"elapsed days negative", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":5,"testUncertainty":1,"elapsedDays":-10,"cutLevels":[500]}`, []string{"elapsedDays"}},
		{"test uncertainty enormous", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":1e308,"elapsedDays":10,"cutLevels":[500]}`, []string{"testUncertainty"}},
		{"prior uncertainty and days enormous", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":2000000000,"testUncertainty":1,"elapsedDays":2000000000,"cutLevels":[500]}`, []string{"priorUncertainty", "elapsedDays"}},
		{"cut level enormous", "/api/forecast/reading", `{"priorAbility":600,"priorUncertainty":50,"testUncertainty":1,"elapsedDays":10,"cutLevels":[500,1e308]}`, []string{"cutLevels[1]"}},
		{"group values enormous", "/api/forecast/reading/group", `{"studentData":[[1e308,50,180],{"priorAbility":1.79e308,"priorUncertainty":40,"elapsedDays":1e20}],"testUncertainty":30,"cutLevels":[400,600]}`, []string{"studentData[0].priorAbility", "studentData[1].priorAbility", "studentData[1].elapsedDays"}},
		{"group empty", "/api/forecast/reading/group", `{"studentData":[],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData"}},
		{"group entry fields", "/api/forecast/reading/group", `{"studentData":[{"priorAbility":1},{"priorUncertainty":-2,"elapsedDays":1,"priorAbility":1}],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData[0].priorUncertainty", "studentData[0].elapsedDays", "studentData[1].priorUncertainty"}},
		{"group array entry of 2 numbers", "/api/forecast/reading/group", `{"studentData":[[1,2]],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData[0]"}},
		{"group array entry of strings", "/api/forecast/reading/group", `{"studentData":[[500,60,"x"]],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData[0]"}},
		{"group of arrays without cut levels", "/api/forecast/reading/group", `{"studentData":[[500,40,90]],"testUncertainty":30}`, []string{"cutLevels"}},
		{"group entry overflowing a double", "/api/forecast/reading/group", `{"studentData":[{"priorAbility":1e999,"priorUncertainty":5,"elapsedDays":1}],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData[0].priorAbility"}},
		{"group entry of the wrong type", "/api/forecast/reading/group", `{"studentData":[{"priorAbility":"high","priorUncertainty":5,"elapsedDays":1}],"testUncertainty":1,"cutLevels":[500]}`, []string{"studentData[0].priorAbility"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != 400 {
				t.Fatalf("got %d %s; want 400", r.Status, r.Body)
			}
			var e struct {
				ValidationErrors map[string][]string `json:"validationErrors"`
			}
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.fields {
				if !servetest.HasProblem(e.ValidationErrors, f) {
					t.Errorf("validationErrors: got %v; want an entry for %q", e.ValidationErrors, f)
				}
			}
		})
	}
}

func TestLargeGroup(t *testing.T) {
	t.Parallel()
	s := start(t)
	var b strings.Builder
	b.WriteString(`{"testUncertainty":30,"cutLevels":[400,600,800],"studentData":[`)
	const n = 100000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%d,%d,%d]", 200+i%900, 40+i%50, i%365)
	}
	b.WriteString("]}")
	var g groupBody
	decode(t, s.Post("/api/forecast/reading/group", b.String()), &g)
	if len(g.Forecasts.Students) != n {
		t.Fatalf("got %d students; want %d", len(g.Forecasts.Students), n)
	}
	if st := g.Forecasts.Students[n-1]; st.Ability < float64(200+(n-1)%900) {
		t.Errorf("last student: got %+v; want the last input's forecast", st)
	}
	over := strings.Replace(b.String(), `"studentData":[`, `"studentData":[[1,2,3],`, 1)
	if r := s.Post("/api/forecast/reading/group", over); r.Status != 400 || !strings.Contains(string(r.Body), "limit is 100000") {
		t.Errorf("100,001 students: got %d; want 400 naming the limit", r.Status)
	}
}
