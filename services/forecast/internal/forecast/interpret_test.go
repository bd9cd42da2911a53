package forecast

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

func ptr[T any](v T) *T { return &v }

func badRequest(t *testing.T, r servetest.Response) map[string][]string {
	t.Helper()
	var e struct{ ValidationErrors map[string][]string }
	if r.Status != 400 || json.Unmarshal(r.Body, &e) != nil {
		t.Fatalf("got %d %s; want 400", r.Status, r.Body)
	}
	return e.ValidationErrors
}

// TestForecastPercentile: grade and timeOfYear add the percentile of the forecast ability (and
// the grade's display cap) on the single and group forecasts of both frameworks; without them
// the answer is byte for byte the original.
func TestForecastPercentile(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := measure.Demo()
	for _, c := range []struct{ path, framework, body string }{
		{"/api/forecast/reading", "lexile", single},
		{"/api/forecast/math", "quantile", single},
		{"/api/forecast/reading/group", "lexile", group},
		{"/api/forecast/math/group", "quantile", group},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			fw, _ := b.Framework(c.framework)
			norms, _ := b.Norms(c.framework, 2, "EOY")
			plain := s.Post(c.path, c.body)
			if plain.Status != 200 || bytes.Contains(plain.Body, []byte("percentile")) {
				t.Fatalf("without a grade: %d %s; want 200 without percentile", plain.Status, plain.Body)
			}
			r := s.Post(c.path, strings.Replace(c.body, "{", `{"grade":2,"timeOfYear":"EOY",`, 1))
			type entry struct {
				Ability        float64
				AbilityDisplay string
				Percentile     *int
			}
			var got []entry
			if strings.HasSuffix(c.path, "/group") {
				var g struct{ Forecasts struct{ Students []entry } }
				if err := json.Unmarshal(r.Body, &g); err != nil || r.Status != 200 {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
				got = g.Forecasts.Students
			} else {
				var e entry
				if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != 200 {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
				got = []entry{e}
			}
			for i, e := range got {
				if e.Percentile == nil || *e.Percentile != norms.Rank(e.Ability) {
					t.Errorf("student %d: percentile %v; want %d, the rank of %v", i, e.Percentile, norms.Rank(e.Ability), e.Ability)
				}
				if want := fw.DisplayGrade(e.Ability, 2); e.AbilityDisplay != want {
					t.Errorf("student %d: abilityDisplay %q; want %q (grade 2 cap)", i, e.AbilityDisplay, want)
				}
			}
			// The rest of the answer is unchanged.
			var a, p any
			_ = json.Unmarshal(r.Body, &a)
			_ = json.Unmarshal(plain.Body, &p)
			if g, w := mustJSON(t, without(a)), mustJSON(t, without(p)); g != w {
				t.Errorf("with a grade the rest of the answer is %s; want %s", g, w)
			}
		})
	}
	// Grade 2's cap (lexile 1100L) holds a 1500L forecast at 1100L, ranked 99.
	r := s.Post("/api/forecast/reading", `{"priorAbility":1500,"priorUncertainty":20,"testUncertainty":10,"elapsedDays":0,"cutLevels":[500],"grade":2,"timeOfYear":"EOY"}`)
	if !bytes.Contains(r.Body, []byte(`"abilityDisplay":"1100L"`)) || !bytes.Contains(r.Body, []byte(`"percentile":99`)) {
		t.Errorf("got %d %s; want abilityDisplay 1100L and percentile 99", r.Status, r.Body)
	}
}

// without drops the keys a grade adds or changes, at any depth.
func without(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "percentile")
		delete(v, "abilityDisplay")
		for k, e := range v {
			v[k] = without(e)
		}
	case []any:
		for i, e := range v {
			v[i] = without(e)
		}
	}
	return v
}

func TestForecastPercentileValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, c := range []struct {
		name, extra string
		want        map[string]string
	}{
		{"grade alone", `"grade":3`, map[string]string{"timeOfYear": "is required with grade (BOY, MOY or EOY)"}},
		{"timeOfYear alone", `"timeOfYear":"BOY"`, map[string]string{"grade": "is required with timeOfYear (0 for Kindergarten to 12)"}},
		{"grade 13", `"grade":13,"timeOfYear":"BOY"`, map[string]string{"grade": "must be between 0 (Kindergarten) and 12, got 13"}},
		{"grade -1", `"grade":-1,"timeOfYear":"BOY"`, map[string]string{"grade": "must be between 0 (Kindergarten) and 12, got -1"}},
		{"grade 12", `"grade":12,"timeOfYear":"EOY"`, nil},
		{"grade 0", `"grade":0,"timeOfYear":"BOY"`, nil},
		{"time of year", `"grade":3,"timeOfYear":"NOY"`, map[string]string{"timeOfYear": `must be BOY, MOY or EOY, got "NOY"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/api/forecast/reading", "/api/forecast/math/group"} {
				body := single
				if strings.HasSuffix(path, "group") {
					body = group
				}
				r := s.Post(path, strings.Replace(body, "{", "{"+c.extra+",", 1))
				if c.want == nil {
					if r.Status != 200 {
						t.Errorf("%s: got %d %s; want 200", path, r.Status, r.Body)
					}
					continue
				}
				got := badRequest(t, r)
				for k, msg := range c.want {
					if len(got[k]) != 1 || got[k][0] != msg {
						t.Errorf("%s: validationErrors[%s] = %v; want [%q]", path, k, got[k], msg)
					}
				}
			}
		})
	}
	// Without norms: a 400 naming grade; the plain forecast still answers.
	dir := t.TempDir()
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "norms.csv")); err != nil {
		t.Fatal(err)
	}
	bare := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	if r := bare.Post("/api/forecast/math", single); r.Status != 200 {
		t.Errorf("plain forecast without norms: %d %s", r.Status, r.Body)
	}
	got := badRequest(t, bare.Post("/api/forecast/math", strings.Replace(single, "{", `{"grade":5,"timeOfYear":"MOY",`, 1)))
	if want := "the content bundle has no quantile norms for grade 5 MOY, so no percentile can be given"; len(got["grade"]) != 1 || got["grade"][0] != want {
		t.Errorf("got %v; want grade: %q", got, want)
	}
}

// TestComprehension: the rates are the scale model's P(θ, d) (lexile 0.75 at a match) in the
// request's order, on both fronts; every problem is named at once.
func TestComprehension(t *testing.T) {
	t.Parallel()
	s := start(t)
	const path = "/api/forecast/comprehension"
	b := measure.Demo()
	for _, c := range []struct {
		framework, as string
		reader        float64
		texts         []float64
	}{
		{"lexile", "Lexile", 850, []float64{600, 850, 1100}},
		{"quantile", "QUANTILE", -200, []float64{-200, 10000, -10000}},
	} {
		fw, _ := b.Framework(c.framework)
		body := fmt.Sprintf(`{"framework":%q,"readerAbility":%v,"textMeasures":%s}`, c.as, c.reader, mustJSON(t, c.texts))
		r := s.Post(path, body)
		var got struct {
			Rates      []float64
			Framework  string
			ApiVersion string
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		want := fw.ComprehensionRates(c.reader, c.texts)
		if mustJSON(t, got.Rates) != mustJSON(t, want) || got.Framework != c.framework || got.ApiVersion != serve.Version {
			t.Errorf("%s: got %s; want rates %v, framework %s", c.framework, r.Body, want, c.framework)
		}
		if c.framework == "lexile" && (got.Rates[1] < 0.75-1e-12 || got.Rates[1] > 0.75+1e-12 || got.Rates[0] <= 0.75 || got.Rates[2] >= 0.75) {
			t.Errorf("lexile rates %v; want 0.75 at a match, more on an easier text, less on a harder", got.Rates)
		}
		client := forecastv1.NewForecastServiceClient(s.Conn)
		resp, err := client.ForecastComprehension(s.Authed(context.Background()), &forecastv1.ComprehensionRequest{
			Framework: ptr(c.as), ReaderAbility: ptr(c.reader), TextMeasures: c.texts})
		if err != nil || mustJSON(t, resp.GetRates()) != mustJSON(t, got.Rates) || resp.GetFramework() != c.framework {
			t.Errorf("gRPC: got %v, %v; want the JSON answer %s", resp, err, r.Body)
		}
	}
	many := make([]float64, 5000)
	if r := s.Post(path, `{"framework":"lexile","readerAbility":0,"textMeasures":`+mustJSON(t, many)+`}`); r.Status != 200 {
		t.Errorf("5,000 texts: got %d; want 200", r.Status)
	}
	for _, c := range []struct {
		name, body string
		want       map[string]string
	}{
		{"everything missing", `{}`, map[string]string{"framework": "is required (lexile or quantile)", "readerAbility": "is required",
			"textMeasures": "must hold at least one text measure"}},
		{"everything wrong", `{"framework":"klingon","readerAbility":10000.5,"textMeasures":[1,-10001]}`, map[string]string{
			"framework": `unknown framework "klingon" (want lexile or quantile)`, "readerAbility": "must be a number between -10000 and 10000, got 10000.5",
			"textMeasures": "textMeasures[1]: must be a number between -10000 and 10000, got -10001"}},
		{"too many texts", `{"framework":"lexile","readerAbility":0,"textMeasures":` + mustJSON(t, make([]float64, 5001)) + `}`,
			map[string]string{"textMeasures": "holds 5001 measures; the limit is 5000"}},
		{"unknown field", `{"framework":"lexile","readerAbility":0,"textMeasure":[1]}`, map[string]string{"textMeasure": `unknown field "textMeasure"; did you mean "textMeasures"?`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := badRequest(t, s.Post(path, c.body))
			for k, msg := range c.want {
				if len(got[k]) != 1 || got[k][0] != msg {
					t.Errorf("validationErrors[%s] = %v; want [%q]", k, got[k], msg)
				}
			}
		})
	}
	_, err := forecastv1.NewForecastServiceClient(s.Conn).ForecastComprehension(s.Authed(context.Background()), &forecastv1.ComprehensionRequest{
		Framework: ptr("lexile"), TextMeasures: []float64{1, 2e4}})
	code, fields := fieldViolations(err)
	if code != codes.InvalidArgument || !fields["readerAbility"] || !fields["textMeasures[1]"] || len(fields) != 2 {
		t.Errorf("gRPC: got %v %v; want InvalidArgument naming readerAbility and textMeasures[1]", code, fields)
	}
}

// fieldViolations is a gRPC error's code and the fields its BadRequest details name.
func fieldViolations(err error) (codes.Code, map[string]bool) {
	st := status.Convert(err)
	fields := map[string]bool{}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields[v.GetField()] = true
			}
		}
	}
	return st.Code(), fields
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestForecastTimeOfYearAnyCase: timeOfYear is matched without regard to case, as framework is,
// on every forecast path that takes it (the group stream's settings too) and on gRPC: "eoy"
// answers byte for byte as "EOY"; "EOYY" is still a 400 naming timeOfYear.
func TestForecastTimeOfYearAnyCase(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, path := range []string{"/api/forecast/reading", "/api/forecast/math", "/api/forecast/reading/group", "/api/forecast/math/group"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			body := single
			if strings.HasSuffix(path, "group") {
				body = group
			}
			with := func(toy string) string { return strings.Replace(body, "{", `{"grade":4,"timeOfYear":"`+toy+`",`, 1) }
			want := s.Post(path, with("EOY"))
			if want.Status != 200 {
				t.Fatalf("EOY: got %d %s; want 200", want.Status, want.Body)
			}
			for _, spelt := range []string{"eoy", "Eoy"} {
				if got := s.Post(path, with(spelt)); got.Status != 200 || !bytes.Equal(got.Body, want.Body) {
					t.Errorf("%s: got %d %s; want 200 %s", spelt, got.Status, got.Body, want.Body)
				}
			}
			if got := badRequest(t, s.Post(path, with("EOYY"))); len(got["timeOfYear"]) != 1 || got["timeOfYear"][0] != `must be BOY, MOY or EOY, got "EOYY"` {
				t.Errorf("EOYY: got %v; want timeOfYear refused", got)
			}
		})
	}
	t.Run("group stream", func(t *testing.T) {
		t.Parallel()
		stream := func(toy string) servetest.Response {
			return s.Do(http.MethodPost, "/api/forecast/reading/group/stream", "application/x-ndjson",
				`{"grade":4,"timeOfYear":"`+toy+`","testUncertainty":32.5,"cutLevels":[500,650,800]}`+"\n[640,70,180]\n", "Authorization", "Bearer "+s.Token())
		}
		want, got := stream("MOY"), stream("moy")
		if want.Status != 200 || got.Status != 200 || !bytes.Equal(got.Body, want.Body) || !strings.Contains(string(got.Body), "percentile") {
			t.Errorf("moy: got %d %s; want 200 %s, with a percentile", got.Status, got.Body, want.Body)
		}
		if bad := stream("fall"); bad.Status != 400 || !strings.Contains(string(bad.Body), `must be BOY, MOY or EOY, got \"fall\"`) {
			t.Errorf("fall: got %d %s; want 400 naming timeOfYear", bad.Status, bad.Body)
		}
	})
	t.Run("gRPC", func(t *testing.T) {
		t.Parallel()
		client := forecastv1.NewForecastServiceClient(s.Conn)
		req := func(toy string) *forecastv1.ForecastRequest {
			return &forecastv1.ForecastRequest{PriorAbility: ptr(640.0), PriorUncertainty: ptr(70.0), TestUncertainty: ptr(32.5), ElapsedDays: ptr(180.0),
				CutLevels: []float64{500, 650, 800}, Grade: ptr(int32(4)), TimeOfYear: ptr(toy)}
		}
		want, err := client.ForecastReading(s.Authed(context.Background()), req("BOY"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.ForecastReading(s.Authed(context.Background()), req("boy"))
		if err != nil || got.GetPercentile() != want.GetPercentile() || want.Percentile == nil {
			t.Errorf("boy: got %v, %v; want percentile %v as BOY's", got, err, want.Percentile)
		}
	})
}
