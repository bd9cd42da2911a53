package forecast

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

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

// refusal checks a 400 whose problem under field is want.
func refusal(t *testing.T, s *servetest.Server, path, body, field, want string) {
	t.Helper()
	r := s.Post(path, body)
	if strings.HasSuffix(path, "/stream") {
		r = s.Batch(path, body)
	}
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

const (
	oneReq    = `{"priorAbility":520,"priorUncertainty":60,"elapsedDays":120,"testUncertainty":30,"cutLevels":[450,600]}`
	groupReq  = `{"studentData":[{"priorAbility":520,"priorUncertainty":60,"elapsedDays":120}],"testUncertainty":30,"cutLevels":[450,600]}`
	streamReq = `{"testUncertainty":30,"cutLevels":[450,600]}` + "\n" + `[520,60,120]` + "\n"
	planOf    = `{"framework":"%s","priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":700}`
	noCurveIs = `the bundle has no norm curve for framework "acme-read", so forecasts are not available`
)

// TestFromNothing: on a bundle made by yardstick-calibrate -new-framework (a made-up reading
// framework), every reading forecast path answers the 400 naming what is missing until
// yardstick-calibrate norms -bundle has written the norm curve and the norms; after a reload
// they answer as pkg/measure computes on that curve, percentiles included. The math paths,
// whose subject the bundle lacks, stay 400; comprehension needs only the scale.
func TestFromNothing(t *testing.T) {
	t.Parallel()
	nc := servetest.FromNothing(t)
	s, live := startOn(t, nc.Dir)
	for _, path := range []string{"/api/forecast/reading", "/api/forecast/reading/group"} {
		body := map[bool]string{true: groupReq, false: oneReq}[strings.HasSuffix(path, "group")]
		refusal(t, s, path, body, "grade", noCurveIs)
	}
	refusal(t, s, "/api/forecast/reading/group/stream", streamReq, "grade", noCurveIs)
	refusal(t, s, "/api/forecast/plan", fmt.Sprintf(planOf, "acme-read"), "framework",
		`the bundle has no norm curve for framework "acme-read", so plans are not available`)
	refusal(t, s, "/api/forecast/math", oneReq, "subject", `the bundle has no framework for subject "math", so math forecasts are not available`)
	r := s.Post("/api/forecast/comprehension", `{"framework":"acme-read","readerAbility":500,"textMeasures":[400,500]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"rates":[0.7310585786300049,0.5]`) {
		t.Errorf("comprehension: got %d %s; want rates [0.731…, 0.5] (success at match 0.5, 100 units a logit)", r.Status, r.Body)
	}

	out := servetest.Run(t, nc.Calibrate, "norms", "-bundle", nc.Dir, nc.Measures)
	if !strings.Contains(out, "14 norms tables and the norm curves of acme-read") {
		t.Errorf("norms: %s", out)
	}
	if changed, err := live.Reload(); err != nil || !changed {
		t.Fatalf("reload after norms: changed %v, %v", changed, err)
	}
	b := live.Bundle()
	fw, _ := b.Framework(servetest.NewFramework)
	if !fw.HasNormCurve() {
		t.Fatal("no norm curve after norms -bundle")
	}
	f := fw.Forecast(measure.Normal{Mean: 520, SD: 60}, 120, 30, []float64{450, 600})
	var got struct {
		Ability        float64
		AbilityDisplay string
		Probabilities  []float64
		Percentile     *int
	}
	r = s.Post("/api/forecast/reading", strings.Replace(oneReq, `{`, `{"grade":5,"timeOfYear":"EOY",`, 1))
	if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil {
		t.Fatalf("reading after norms: got %d %s", r.Status, r.Body)
	}
	n, _ := b.Norms(fw.Name, 5, "EOY")
	if got.Ability != f.Ability || got.AbilityDisplay != fw.DisplayGrade(f.Ability, 5) || fmt.Sprint(got.Probabilities) != fmt.Sprint(f.Probabilities) ||
		got.Percentile == nil || *got.Percentile != n.Rank(f.Ability) {
		t.Errorf("reading after norms: got %+v; want %+v, percentile %d", got, f, n.Rank(f.Ability))
	}
	for _, c := range []struct{ path, body string }{
		{"/api/forecast/reading/group", groupReq}, {"/api/forecast/plan", fmt.Sprintf(planOf, "acme-read")},
	} {
		if r := s.Post(c.path, c.body); r.Status != 200 {
			t.Errorf("%s after norms: got %d %s", c.path, r.Status, r.Body)
		}
	}
	if r := s.Batch("/api/forecast/reading/group/stream", streamReq); r.Status != 200 || !strings.Contains(string(r.Body), `"group"`) {
		t.Errorf("group stream after norms: got %d %s", r.Status, r.Body)
	}
	refusal(t, s, "/api/forecast/math/group", groupReq, "subject", `the bundle has no framework for subject "math", so math forecasts are not available`)
	batch := s.Batch("/api/forecast/batch", `{"id":"r","path":"/api/forecast/reading","body":`+oneReq+`}`+"\n"+`{"id":"m","path":"/api/forecast/math","body":`+oneReq+`}`+"\n")
	lines, _ := servetest.ParseBatch(t, batch.Body)
	unary := s.Post("/api/forecast/reading", oneReq)
	if len(lines) != 2 || lines[0].Status != 200 || string(lines[0].Body) != string(unary.Body) || lines[1].Status != 400 {
		t.Errorf("batch: got %s; want the reading record as its unary answer %s and the math one 400", batch.Body, unary.Body)
	}
}

// TestSingleFrameworkBundle: a bundle of one framework (the demo's quantile alone, subject math)
// serves the math paths exactly as the demo does, and answers the reading paths with the 400.
func TestSingleFrameworkBundle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range demoFilesOf(t, "quantile") {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := startOn(t, dir)
	demo := start(t)
	for _, path := range []string{"/api/forecast/math", "/api/forecast/math/group"} {
		body := map[bool]string{true: groupReq, false: oneReq}[strings.HasSuffix(path, "group")]
		got, want := s.Post(path, body), demo.Post(path, body)
		if got.Status != 200 || string(got.Body) != string(want.Body) {
			t.Errorf("%s: got %d %s; want the demo's %s", path, got.Status, got.Body, want.Body)
		}
	}
	const noReading = `the bundle has no framework for subject "reading", so reading forecasts are not available`
	refusal(t, s, "/api/forecast/reading", oneReq, "subject", noReading)
	refusal(t, s, "/api/forecast/reading/group", groupReq, "subject", noReading)
	refusal(t, s, "/api/forecast/reading/group/stream", streamReq, "subject", noReading)
	refusal(t, s, "/api/forecast/plan", fmt.Sprintf(planOf, "lexile"), "framework", `unknown framework "lexile" (want quantile)`)
}

// demoFilesOf is the demo bundle's files with only the rows of one framework (and of its links'
// point tables).
func demoFilesOf(t *testing.T, framework string) map[string][]byte {
	t.Helper()
	files, links := map[string][]byte{}, map[string]bool{}
	for _, name := range []string{"links.csv", "frameworks.csv", "grades.csv", "strands.csv", "items.csv", "benchmarks.csv", "link_points.csv", "forms.csv", "norms.csv"} {
		data, err := fs.ReadFile(measure.DemoFiles(), name)
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		header := true
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Split(line, ",")
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case header:
				header = false
			case fields[0] == framework || fields[1] == framework:
				if name == "links.csv" {
					links[fields[0]] = true
				}
			case name == "link_points.csv" && links[fields[0]]:
			default:
				continue
			}
			keep = append(keep, line)
		}
		files[name] = []byte(strings.Join(keep, "\n"))
	}
	return files
}
