package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// refMeasures turns the committed two-prior R cohort (pkg/measure/testdata/growth) into a
// growth measures file: lexile, grades 3, 4 and 5 EOY, rows in reverse order (any order goes).
func refMeasures(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "growth", "twoprior_measures.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range recs[1:] {
		for k, g := range []int{3, 4, 5} {
			rows = append(rows, fmt.Sprintf("lexile,s%s,%d,EOY,%s", r[0], g, r[1+k]))
		}
	}
	var sb strings.Builder
	sb.WriteString("framework,student,grade,time_of_year,measure\n")
	for k := len(rows) - 1; k >= 0; k-- {
		sb.WriteString(rows[k] + "\n")
	}
	return sb.String()
}

// refLoss reads R's per-τ losses and knots for the two-prior cohort.
func refLoss(t *testing.T) (loss []float64, knots [][]float64) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "growth", "twoprior_ref.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		var v []float64
		for _, s := range strings.Split(r[2], ";") {
			x, _ := strconv.ParseFloat(s, 64)
			v = append(v, x)
		}
		switch r[0] {
		case "loss":
			loss = append(loss, v[0])
		case "knots":
			knots = append(knots, v)
		}
	}
	return loss, knots
}

// TestGrowthNormsCommand runs the subcommand on R's two-prior cohort: three models (3→4, 4→5 and
// (3, 4)→5), the two-prior one equal to R's fit, a growth_norms.csv a bundle loads, the report
// in the shape, progress on stderr.
func TestGrowthNormsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	measures := write(t, dir, "measures.csv", refMeasures(t))
	bundle := filepath.Join(dir, "bundle")
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, bundle); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(bundle, "growth_norms.csv")
	report := filepath.Join(dir, "report.json")
	_, stderr, err := call(t, "growth-norms", "-out", out, "-report", report, measures)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"yardstick-calibrate: fitting lexile grade 5 EOY from 3:EOY;4:EOY: 1500 students, 100 quantiles\n",
		"yardstick-calibrate: fitted lexile grade 5 EOY from 3:EOY;4:EOY in ",
		"yardstick-calibrate: 3 growth models fitted, 0 skipped, from 4500 measures in ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want it to contain %q", stderr, want)
		}
	}
	b, err := measure.LoadDir(bundle)
	if err != nil {
		t.Fatal(err)
	}
	g3, g4, g5 := measure.Window{Grade: 3, TimeOfYear: "EOY"}, measure.Window{Grade: 4, TimeOfYear: "EOY"}, measure.Window{Grade: 5, TimeOfYear: "EOY"}
	for _, c := range []struct {
		current measure.Window
		priors  []measure.Window
	}{{g4, []measure.Window{g3}}, {g5, []measure.Window{g4}}, {g5, []measure.Window{g3, g4}}} {
		if _, ok := b.GrowthNorms("lexile", c.current, c.priors); !ok {
			t.Errorf("the written bundle lacks the model %s from %v", c.current, c.priors)
		}
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Models []struct {
			Framework string `json:"framework"`
			Current   struct {
				Grade      int    `json:"grade"`
				TimeOfYear string `json:"timeOfYear"`
			} `json:"current"`
			Priors []struct {
				Grade      int    `json:"grade"`
				TimeOfYear string `json:"timeOfYear"`
			} `json:"priors"`
			N            int         `json:"n"`
			Knots        [][]float64 `json:"knots"`
			Boundaries   [][]float64 `json:"boundaries"`
			Lowest       *float64    `json:"lowest"`
			Highest      *float64    `json:"highest"`
			Coefficients [][]float64 `json:"coefficients"`
			Loss         []float64   `json:"loss"`
		} `json:"models"`
		Skipped []json.RawMessage `json:"skipped"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	if len(rep.Models) != 3 || rep.Skipped == nil || len(rep.Skipped) != 0 {
		t.Fatalf("report: %d models, skipped %v; want 3 and []", len(rep.Models), rep.Skipped)
	}
	two := rep.Models[2] // models go by current window, then order
	if two.Current.Grade != 5 || len(two.Priors) != 2 || two.Priors[0].Grade != 3 || two.Priors[1].Grade != 4 || two.N != 1500 {
		t.Fatalf("third model: %+v; want grade 5 from grades 3 and 4, n 1500", two)
	}
	if len(two.Coefficients) != 100 || len(two.Coefficients[0]) != 15 || len(two.Boundaries) != 2 || two.Lowest == nil || two.Highest == nil {
		t.Fatalf("third model: %d coefficient vectors of %d, %d boundaries; want 100 of 15, 2", len(two.Coefficients), len(two.Coefficients[0]), len(two.Boundaries))
	}
	loss, knots := refLoss(t)
	if fmt.Sprint(two.Knots) != fmt.Sprint(knots) {
		t.Errorf("knots: got %v; want R's %v", two.Knots, knots)
	}
	for k, want := range loss {
		if rel := math.Abs(two.Loss[k]-want) / want; rel > 1e-8 {
			t.Errorf("τ_%d loss: got %v; want R's %v", k+1, two.Loss[k], want)
		}
	}
}

func TestGrowthNormsCommandSkipsSmallCohorts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	measures := write(t, dir, "measures.csv", refMeasures(t))
	out := filepath.Join(dir, "growth_norms.csv")
	stdout, stderr, err := call(t, "growth-norms", "-min-students", "1501", "-out", out, "-report", "-", measures)
	if err != nil {
		t.Fatal(err)
	}
	var rep measure.GrowthReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 0 || len(rep.Skipped) != 3 {
		t.Fatalf("got %d models, %d skipped; want 0 and 3", len(rep.Models), len(rep.Skipped))
	}
	s := rep.Skipped[2]
	if s.N != 1500 || s.Reason != "1500 students have all its windows; fewer than the minimum 1501" || len(s.Priors) != 2 {
		t.Errorf("skipped: %+v; want n 1500 and the minimum named", s)
	}
	if !strings.Contains(stderr, "0 growth models fitted, 3 skipped") {
		t.Errorf("stderr %q", stderr)
	}
	// 1500 is enough: the boundary's other side.
	stdout, _, err = call(t, "growth-norms", "-min-students", "1500", "-out", out, "-report", "-", measures)
	if err != nil || json.Unmarshal([]byte(stdout), &rep) != nil || len(rep.Models) != 3 {
		t.Errorf("-min-students 1500: %v, %d models; want 3", err, len(rep.Models))
	}
}

func TestGrowthNormsRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	head := "framework,student,grade,time_of_year,measure\n"
	good := write(t, dir, "good.csv", head+"lexile,a,4,EOY,500\nlexile,a,5,EOY,600\n")
	out := filepath.Join(dir, "growth_norms.csv")
	for _, c := range []struct {
		name, data string
		args       []string
		usage      bool
		want       string
	}{
		{"no file", "", []string{"-out", out}, true, "want one measures file"},
		{"no -out", "", []string{good}, true, "-out is required"},
		{"min-students 0", "", []string{"-min-students", "0", "-out", out, good}, true, "-min-students 0; want at least 1"},
		{"min-students not a number", "", []string{"-min-students", "x", "-out", out, good}, true, "min-students"},
		{"duplicate", head + "lexile,a,4,EOY,500\nlexile,b,4,EOY,510\nlexile,a,4,EOY,520\n", nil, false,
			`m.csv:4: student "a" has a second lexile measure in grade 4 EOY (first at line 2)`},
		{"not a number", head + "lexile,a,4,EOY,5x0\n", nil, false, `m.csv:2: measure "5x0" is not a number`},
		{"unknown framework", head + "lexil,a,4,EOY,500\n", nil, false, `m.csv:2: unknown framework "lexil"`},
		{"grade", head + "lexile,a,13,EOY,500\n", nil, false, `m.csv:2: grade "13" is not a grade 0-12`},
		{"time of year", head + "lexile,a,4,EOJ,500\n", nil, false, `m.csv:2: time_of_year "EOJ" is not BOY, MOY or EOY`},
		{"header", "framework,grade,time_of_year,measure\n", nil, false, `m.csv:1: header`},
		{"missing file", "", []string{"-out", out, filepath.Join(dir, "nope.csv")}, false, "nope.csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := c.args
			if c.data != "" {
				sub := t.TempDir()
				args = []string{"-out", out, write(t, sub, "m.csv", c.data)}
			}
			_, _, err := call(t, append([]string{"growth-norms"}, args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, errUsage) != c.usage {
				t.Errorf("got %v; want an error containing %q (usage %v)", err, c.want, c.usage)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s (stat: %v)", out, err)
	}
}
