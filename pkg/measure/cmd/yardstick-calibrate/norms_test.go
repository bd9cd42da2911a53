package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// TestNorms: the norms subcommand writes a norms.csv that a bundle loads, with the sample's
// quantiles at the percentiles asked.
func TestNorms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var sample strings.Builder
	sample.WriteString("framework,grade,time_of_year,measure\n")
	for v := 0; v <= 100; v++ {
		fmt.Fprintf(&sample, "lexile,4,MOY,%d\nquantile,2,BOY,%d\n", 500+v, -v)
	}
	measures := write(t, dir, "measures.csv", sample.String())
	bundle := filepath.Join(dir, "bundle")
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, bundle); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(bundle, "norms.csv")
	_, stderr, err := call(t, "norms", "-percentiles", "10, 50,90", "-out", out, measures)
	if err != nil {
		t.Fatal(err)
	}
	if want := "yardstick-calibrate: 2 norms tables from 202 measures\n"; stderr != want {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
	b, err := measure.LoadDir(bundle)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fw, tod string
		grade   int
		want    []float64
	}{{"lexile", "MOY", 4, []float64{510, 550, 590}}, {"quantile", "BOY", 2, []float64{-90, -50, -10}}} {
		n, ok := b.Norms(c.fw, c.grade, c.tod)
		if !ok || fmt.Sprint(n.Percentiles, n.Measures) != fmt.Sprint([]float64{10, 50, 90}, c.want) {
			t.Errorf("%s grade %d %s: got %v, %v; want percentiles 10 50 90 at %v", c.fw, c.grade, c.tod, n, ok, c.want)
		}
	}
	if _, ok := b.Norms("lexile", 3, "MOY"); ok {
		t.Error("the demo's lexile grade 3 MOY norms survived; the written file should replace norms.csv")
	}
	stdout, _, err := call(t, "norms", "-out", "-", measures)
	if err != nil || !strings.Contains(stdout, "\nlexile,4,MOY,1,501\n") || !strings.Contains(stdout, "\nlexile,4,MOY,99,599\n") {
		t.Errorf("-out - with default percentiles: got %q, %v; want rows 1 → 501 and 99 → 599", stdout, err)
	}
}

func TestNormsRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := write(t, dir, "good.csv", "framework,grade,time_of_year,measure\nlexile,4,MOY,1\nlexile,4,MOY,2\n")
	bad := write(t, dir, "bad.csv", "framework,grade,time_of_year,measure\nlexile,4,MOY,x\n")
	out := filepath.Join(dir, "norms.csv")
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no file", []string{"norms", "-out", out}, true, "want one measures file"},
		{"no -out", []string{"norms", good}, true, "give one of -out and -bundle"},
		{"bad percentile", []string{"norms", "-percentiles", "10,x", "-out", out, good}, true, `"x" is not a number`},
		{"percentiles out of range", []string{"norms", "-percentiles", "0,50", "-out", out, good}, false, "must increase strictly within (0, 100)"},
		{"bad measure", []string{"norms", "-out", out, bad}, false, `bad.csv:2: measure "x" is not a number`},
		{"missing file", []string{"norms", "-out", out, filepath.Join(dir, "nope.csv")}, false, "nope.csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := call(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, errUsage) != c.usage {
				t.Errorf("got %v; want an error containing %q (usage %v)", err, c.want, c.usage)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s (stat: %v)", out, err)
	}
}
