package servetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Command builds a command of the workspace (its import path) into the test's temporary
// directory and returns the binary's path: tests run the operator's commands themselves.
func Command(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Run runs a built command and fails the test unless it succeeds; it returns its stderr.
func Run(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stderr.String()
}

// The made-up framework of FromNothing: its own name, label and units, nothing of the demo's.
const (
	NewFramework = "acme-read"
	NewLabel     = "AR"
	newUnits     = 100 // units per logit
	newMean      = 500 // the calibrated items' mean difficulty
)

// NewContent is a bundle made from nothing by the operator's commands.
type NewContent struct {
	Dir       string // the bundle (frameworks, strands, items)
	Calibrate string // the yardstick-calibrate binary
	Measures  string // a norming sample of the framework (for yardstick-calibrate norms)
	Dichotomous,
	Polytomous []string // item ids
}

// FromNothing simulates the responses of 800 persons to 24 items scored right or wrong and 6 in
// more than two categories (three 0–2, three 0–3) of a made-up reading framework, in 3 strands,
// and runs yardstick-calibrate -new-framework on them: the bundle holds that framework and those
// items only. It also writes a norming sample of the framework (grades 2–8, MOY and EOY).
func FromNothing(t testing.TB) NewContent {
	t.Helper()
	dir := t.TempDir()
	c := NewContent{Calibrate: Command(t, "github.com/yardstick-dev/yardstick/pkg/measure/cmd/yardstick-calibrate")}
	rng := rand.New(rand.NewPCG(37, 800))
	type item struct {
		id    string
		steps []float64 // logits
	}
	var items []item
	for i := 0; i < 24; i++ {
		id := fmt.Sprintf("AR-%03d", i+1)
		items = append(items, item{id, []float64{-2 + 4*float64(i)/23}})
		c.Dichotomous = append(c.Dichotomous, id)
	}
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("AR-P%02d", i+1)
		steps := []float64{-1 + 0.3*float64(i), 0.2 * float64(i)}
		if i >= 3 {
			steps = append(steps, 1+0.2*float64(i))
		}
		items = append(items, item{id, steps})
		c.Polytomous = append(c.Polytomous, id)
	}
	var resp, strands strings.Builder
	resp.WriteString("person")
	strands.WriteString("id,strand\n")
	for i, it := range items {
		resp.WriteString("," + it.id)
		fmt.Fprintf(&strands, "%s,%s\n", it.id, []string{"Words", "Meaning", "Structure"}[i%3])
	}
	resp.WriteString("\n")
	for p := 0; p < 800; p++ {
		theta := rng.NormFloat64() * 1.2
		fmt.Fprintf(&resp, "P%04d", p)
		for _, it := range items {
			fmt.Fprintf(&resp, ",%d", pcmDraw(rng, theta, it.steps))
		}
		resp.WriteString("\n")
	}
	responses := writeFile(t, dir, "responses.csv", resp.String())
	strandsFile := writeFile(t, dir, "strands.csv", strands.String())
	c.Dir = filepath.Join(dir, "bundle")
	Run(t, c.Calibrate, "-new-framework", NewFramework, "-subject", "reading", "-label", NewLabel,
		"-units-per-logit", fmt.Sprint(newUnits), "-mean", fmt.Sprint(newMean), "-negative-prefix", "N",
		"-strands", strandsFile, "-out", c.Dir, responses)
	var sample strings.Builder
	sample.WriteString("framework,grade,time_of_year,measure\n")
	for g := 2; g <= 8; g++ {
		for _, toy := range []string{"MOY", "EOY"} {
			for k := 0; k < 60; k++ {
				m := 200 + 60*float64(g) + rng.NormFloat64()*120
				fmt.Fprintf(&sample, "%s,%d,%s,%.0f\n", NewFramework, g, toy, m)
			}
		}
	}
	c.Measures = writeFile(t, dir, "measures.csv", sample.String())
	return c
}

// pcmDraw draws a score 0 … len(steps) of the partial credit model at ability theta (logits).
func pcmDraw(rng *rand.Rand, theta float64, steps []float64) int {
	w := make([]float64, len(steps)+1)
	sum, total := 0.0, 1.0
	w[0] = 1
	for k, d := range steps {
		sum += theta - d
		w[k+1] = math.Exp(sum)
		total += w[k+1]
	}
	u := rng.Float64() * total
	for k, v := range w {
		if u < v {
			return k
		}
		u -= v
	}
	return len(steps)
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
