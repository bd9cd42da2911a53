package measure

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The references in testdata/growth are R's (reference.R there): splines::bs and quantreg's
// rq(method = "br") on three seeded cohorts.

// growthRef is one cohort and R's answers on it.
type growthRef struct {
	priors  [][]float64
	current []float64
	knots   [][]float64
	bounds  [][]float64
	lowest  float64
	highest float64
	loss    []float64
	coef    [][]float64
	sgp     []int
	cuts    [][]float64 // per student, at refCutP
}

var refCutP = []int{1, 10, 25, 50, 75, 90, 99}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs[1:]
}

func floats(t *testing.T, s string) []float64 {
	t.Helper()
	parts := strings.Split(s, ";")
	out := make([]float64, len(parts))
	for k, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out[k] = v
	}
	return out
}

func loadGrowthRef(t *testing.T, name string) *growthRef {
	t.Helper()
	dir := filepath.Join("testdata", "growth")
	g := &growthRef{}
	for _, rec := range readCSV(t, filepath.Join(dir, name+"_measures.csv")) {
		vals := floats(t, strings.Join(rec[1:], ";"))
		if g.priors == nil {
			g.priors = make([][]float64, len(vals)-1)
		}
		for k := range g.priors {
			g.priors[k] = append(g.priors[k], vals[k])
		}
		g.current = append(g.current, vals[len(vals)-1])
	}
	for _, rec := range readCSV(t, filepath.Join(dir, name+"_ref.csv")) {
		v := floats(t, rec[2])
		switch rec[0] {
		case "knots":
			g.knots = append(g.knots, v)
		case "boundaries":
			g.bounds = append(g.bounds, v)
		case "range":
			g.lowest, g.highest = v[0], v[1]
		case "loss":
			g.loss = append(g.loss, v[0])
		case "coefficients":
			g.coef = append(g.coef, v)
		case "student":
			g.sgp = append(g.sgp, int(v[0]))
			g.cuts = append(g.cuts, v[1:])
		}
	}
	return g
}

// TestGrowthFitMatchesR fits each reference cohort and holds the result to R's: knots and
// boundaries equal, each τ's loss within 1e-8 relative, SGPs equal for at least 99.5% of the
// students and within 1 for all, cuts equal.
func TestGrowthFitMatchesR(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"oneprior", "twoprior", "ties"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := loadGrowthRef(t, name)
			fit, err := FitGrowth(ref.priors, ref.current, nil)
			if err != nil {
				t.Fatalf("FitGrowth: %v", err)
			}
			m := fit.Model
			for k, s := range m.Splines {
				for j := range s.Knots {
					if s.Knots[j] != ref.knots[k][j] {
						t.Errorf("prior %d knot %d: got %v; want %v", k+1, j+1, s.Knots[j], ref.knots[k][j])
					}
				}
				for j := range s.Boundaries {
					if s.Boundaries[j] != ref.bounds[k][j] {
						t.Errorf("prior %d boundary %d: got %v; want %v", k+1, j+1, s.Boundaries[j], ref.bounds[k][j])
					}
				}
			}
			if m.Lowest != ref.lowest || m.Highest != ref.highest {
				t.Errorf("range: got [%v, %v]; want [%v, %v]", m.Lowest, m.Highest, ref.lowest, ref.highest)
			}
			worst := 0.0
			for k, want := range ref.loss {
				rel := math.Abs(fit.Loss[k]-want) / want
				worst = max(worst, rel)
				if rel > 1e-8 {
					t.Errorf("τ %v loss: got %.12g; want %.12g (R), relative gap %.3g", growthTau(k+1), fit.Loss[k], want, rel)
				}
			}
			pr := make([]float64, len(ref.priors))
			differ, cutsDiffer := 0, 0
			for i := range ref.current {
				for k := range pr {
					pr[k] = ref.priors[k][i]
				}
				q := m.Quantiles(pr)
				got := SGP(&q, ref.current[i])
				if got != ref.sgp[i] {
					differ++
					if d := got - ref.sgp[i]; d > 1 || d < -1 {
						t.Errorf("student %d SGP: got %d; want %d (R) within 1", i+1, got, ref.sgp[i])
					}
				}
				for c, p := range refCutP {
					if got, want := Cut(&q, p), ref.cuts[i][c]; got != want {
						cutsDiffer++
						t.Errorf("student %d cut %d: got %v; want %v (R)", i+1, p, got, want)
					}
				}
			}
			if share := float64(differ) / float64(len(ref.current)); share > 0.005 {
				t.Errorf("SGP differs from R's for %d of %d students (%.2f%%); want at most 0.5%%", differ, len(ref.current), 100*share)
			}
			t.Logf("worst relative loss gap %.3g; SGPs differing %d, students with a cut differing %d of %d", worst, differ, cutsDiffer, len(ref.current))
		})
	}
}

// TestSplineBasisMatchesR holds the basis to R's bs() within 1e-12 at the knots, between them,
// just below the upper boundary and clamped beyond both boundaries, on a spline with distinct
// knots and one with a repeated knot.
func TestSplineBasisMatchesR(t *testing.T) {
	t.Parallel()
	recs := readCSV(t, filepath.Join("testdata", "growth", "basis.csv"))
	if len(recs) < 30 {
		t.Fatalf("%d reference points; want at least 30", len(recs))
	}
	for _, rec := range recs {
		var s Spline
		copy(s.Knots[:], floats(t, rec[0]))
		copy(s.Boundaries[:], floats(t, rec[1]))
		x := floats(t, rec[2])[0]
		want := floats(t, rec[3])
		t.Run(rec[0]+"@"+rec[2], func(t *testing.T) {
			t.Parallel()
			got := make([]float64, SplineColumns)
			s.Basis(x, got)
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-12 {
					t.Errorf("column %d: got %.17g; want %.17g (R)", j+1, got[j], want[j])
				}
			}
		})
	}
}
