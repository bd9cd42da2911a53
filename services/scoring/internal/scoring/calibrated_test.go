package scoring

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// calibratedBundle does what yardstick-calibrate does (pkg/measure/cmd/yardstick-calibrate runs
// these same calls): it calibrates 16 new quantile items, MATH-01…MATH-16, from 400 simulated
// persons in 4 overlapping booklets (half the cells blank), places them at mean 700 and writes
// the demo bundle plus those items, in strands Number and Geometry, to a new directory.
func calibratedBundle(t *testing.T) (string, []measure.Item) {
	t.Helper()
	rng := rand.New(rand.NewPCG(16, 400))
	var csv strings.Builder
	csv.WriteString("person")
	strands := map[string]string{}
	for i := 1; i <= 16; i++ {
		id := fmt.Sprintf("MATH-%02d", i)
		fmt.Fprintf(&csv, ",%s", id)
		strands[id] = []string{"Number", "Geometry"}[i%2]
	}
	csv.WriteString("\n")
	for p := 0; p < 400; p++ {
		theta := rng.NormFloat64()
		fmt.Fprintf(&csv, "S%03d", p)
		for i := 0; i < 16; i++ {
			block, booklet := i/4, p%4
			cell := ""
			if block == booklet || block == (booklet+1)%4 {
				cell = "0"
				if rng.Float64() < 1/(1+math.Exp(-1.5+0.2*float64(i)-theta)) {
					cell = "1"
				}
			}
			csv.WriteString("," + cell)
		}
		csv.WriteString("\n")
	}
	resp, err := measure.ReadResponses(strings.NewReader(csv.String()), "responses.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, items, err := measure.CalibrateBank(context.Background(), measure.BankJob{
		Responses: resp, Framework: "quantile", Base: measure.Demo(), Mean: 700, Strands: strands})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 16 || len(rep.Dropped) != 0 {
		t.Fatalf("%d items calibrated, dropped %v; want 16", len(items), rep.Dropped)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := measure.ExtendBundle(measure.DemoFiles(), items, dir); err != nil {
		t.Fatal(err)
	}
	return dir, items
}

// TestCalibratedBundleServes: a bundle written by calibration loads in the running service, which
// scores the new items exactly as the library does on that bundle, strands included; the same
// items are unknown to the demo content.
func TestCalibratedBundleServes(t *testing.T) {
	t.Parallel()
	dir, items := calibratedBundle(t)
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	bundle, err := measure.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := bundle.Framework("quantile")
	var parts []string
	var answers []measure.Answer
	for i, it := range items {
		result := 0
		if i%3 != 2 {
			result = 1
		}
		parts = append(parts, fmt.Sprintf(`{"id":%q,"result":%d}`, it.ID, result))
		loaded, _ := bundle.Item(it.ID)
		answers = append(answers, measure.Answer{Item: loaded, Correct: result == 1})
	}
	body := `{"items":[` + strings.Join(parts, ",") + `]}`
	want, err := f.Standard(measure.TestOf(answers))
	if err != nil {
		t.Fatal(err)
	}
	r := s.Post("/api/score/items/idsWithResults/standard", body)
	got := decode(t, r.Status, r.Body)
	if got.Framework != "quantile" || got.Ability != int(measure.Round(want.Ability)) || got.Uncertainty != int(measure.Round(want.Uncertainty)) {
		t.Errorf("got %+v; want quantile ability %v ± %v", got, want.Ability, want.Uncertainty)
	}
	r = s.Post("/api/score/items/idsWithResults/standard/strands", `{"grade":5,"timeOfYear":"MOY","items":[`+strings.Join(parts, ",")+`]}`)
	got = decode(t, r.Status, r.Body)
	var names []string
	for _, st := range got.Strands {
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "Geometry,Number" { // in order of first appearance: MATH-01 is Geometry
		t.Errorf("strands %v; want Geometry, Number", names)
	}
	if r := start(t).Post("/api/score/items/idsWithResults/standard", body); r.Status != 400 || !strings.Contains(string(r.Body), "MATH-01") {
		t.Errorf("demo content: got %d %s; want 400 naming the unknown item", r.Status, r.Body)
	}
}
