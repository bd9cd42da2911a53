package measure

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestNormsRank(t *testing.T) {
	t.Parallel()
	n := Norms{Percentiles: []float64{10, 50, 90}, Measures: []float64{100, 200, 300}}
	for _, c := range []struct {
		measure float64
		want    int
	}{
		{200, 50},    // a point of the table
		{100, 10},    // the first point
		{300, 90},    // the last point
		{150, 30},    // halfway: 10 + 40·½
		{101.24, 10}, // 10.496 rounds down
		{101.25, 11}, // 10.5 rounds half up
		{262.5, 75},
		{76.25, 1},   // below the table, along its first segment: 0.5 rounds to 1
		{76.24, 1},   // 0.496 → 0, clamped to 1
		{-1e9, 1},    // far below: clamped
		{321.24, 98}, // above the table, along its last segment: 98.496
		{321.25, 99}, // 98.5 rounds to 99
		{323.75, 99}, // 99.5 → 100, clamped to 99
		{1e9, 99},    // far above: clamped
		{math.NaN(), 0},
	} {
		if got := n.Rank(c.measure); got != c.want {
			t.Errorf("Rank(%v) = %d; want %d", c.measure, got, c.want)
		}
	}
	if got := (Norms{}).Rank(100); got != 0 {
		t.Errorf("empty table: Rank = %d; want 0", got)
	}
}

// TestDemoNorms: every demonstration table is the framework's own norm curve at t = grade,
// grade + 0.5, grade + 1 plus P·z_p (rounded to whole units), and ranks from it are monotone,
// 50 at the median and 1 and 99 at the two ends.
func TestDemoNorms(t *testing.T) {
	t.Parallel()
	b := Demo()
	percentiles := []float64{1, 5, 10, 25, 50, 75, 90, 95, 99}
	for _, name := range []string{"lexile", "quantile"} {
		f, _ := b.Framework(name)
		for g := 0; g < Grades; g++ {
			for i, tod := range []string{"BOY", "MOY", "EOY"} {
				n, ok := b.Norms(name, g, tod)
				if !ok {
					t.Fatalf("%s grade %d %s: no norms", name, g, tod)
				}
				if len(n.Percentiles) != len(percentiles) {
					t.Fatalf("%s grade %d %s: %d points; want %d", name, g, tod, len(n.Percentiles), len(percentiles))
				}
				median := f.prep.curve.at(float64(g) + 0.5*float64(i))
				for k, pc := range percentiles {
					want := median + f.PopulationSD*distuv.UnitNormal.Quantile(pc/100)
					if n.Percentiles[k] != pc || math.Abs(n.Measures[k]-want) > 0.5+1e-9 {
						t.Errorf("%s grade %d %s: point %d = (%v, %v); want (%v, %.2f ± 0.5)", name, g, tod, k, n.Percentiles[k], n.Measures[k], pc, want)
					}
				}
				if got := n.Rank(n.Measures[4]); got != 50 {
					t.Errorf("%s grade %d %s: rank at the median %v = %d; want 50", name, g, tod, n.Measures[4], got)
				}
				if lo, hi := n.Rank(n.Measures[0]-500), n.Rank(n.Measures[8]+500); lo != 1 || hi != 99 {
					t.Errorf("%s grade %d %s: ranks beyond the ends %d, %d; want 1, 99", name, g, tod, lo, hi)
				}
				prev := 0
				for m := n.Measures[0] - 200; m <= n.Measures[8]+200; m += 0.5 {
					r := n.Rank(m)
					if r < prev || r < 1 || r > 99 {
						t.Fatalf("%s grade %d %s: rank %d at %v after %d; want monotone in 1-99", name, g, tod, r, m, prev)
					}
					prev = r
				}
			}
		}
	}
}

// TestNormsOptional: a bundle without norms.csv loads and has no norms.
func TestNormsOptional(t *testing.T) {
	t.Parallel()
	m := demoFS()
	delete(m, "norms.csv")
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Norms("lexile", 3, "MOY"); ok {
		t.Error("a bundle without norms.csv has norms")
	}
	if _, ok := Demo().Norms("lexile", 3, "NOY"); ok {
		t.Error("norms for time of year NOY")
	}
}

// TestLiveKeepsLastGoodNorms: a norms file broken on a reload is reported with file:line and
// the bundle already serving (with its norms) stays.
func TestLiveKeepsLastGoodNorms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, f := range demoFS() {
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := live.Bundle()
	path := filepath.Join(dir, "norms.csv")
	good, _ := os.ReadFile(path)
	broken := strings.Replace(string(good), "lexile,3,MOY,50,", "lexile,3,MOY,50.x,", 1)
	if broken == string(good) {
		t.Fatal("test setup: no lexile grade 3 MOY median row")
	}
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := live.Reload()
	if err == nil || changed || !strings.Contains(err.Error(), "norms.csv:") || !strings.Contains(err.Error(), `percentile "50.x" is not a number`) {
		t.Fatalf("reload of a broken norms file: got changed=%v, %v; want a norms.csv:line error", changed, err)
	}
	if live.Bundle() != first {
		t.Fatal("a failed reload replaced the bundle")
	}
	if n, ok := live.Bundle().Norms("lexile", 3, "MOY"); !ok || n.Rank(n.Measures[4]) != 50 {
		t.Errorf("after the failed reload: norms %v, %v; want the last good ones", n, ok)
	}
}
