package measure

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPCMQuasiNewtonMatchesNewton: the quasi-Newton path (the information computed exactly only
// now and then) reaches the optimum of the exact Newton path (the information at every
// iteration): every threshold within 1e-9 logits, and the SEs at it the same.
func TestPCMQuasiNewtonMatchesNewton(t *testing.T) {
	t.Parallel()
	for _, model := range []string{ModelPCM, ModelRSM} {
		for _, blank := range []float64{0, 0.2, 0.5} {
			t.Run(fmt.Sprintf("%s/blank=%g", model, blank), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(42, uint64(100*blank)))
				steps := make([][]float64, 12)
				for i := range steps {
					loc := -1.5 + 3*float64(i)/11
					steps[i] = []float64{loc - 1, loc, loc + 1}
				}
				resp := simulatePCM(rng, 600, steps, 0, 1.2, func(p, i int) bool { return rng.Float64() >= blank })
				top := make([]int, len(resp.Items))
				for i := range top {
					top[i] = 3
				}
				rsm := model == ModelRSM
				d := pruneScores(resp, top, rsm)
				var deltas, ses [2][]float64
				var iters [2]int
				for run, exact := range []bool{true, false} {
					est := newPEstimation(d, d.keptItems(), rsm)
					est.exactNewton = exact
					n, err := est.newton(context.Background(), nil)
					if err != nil {
						t.Fatal(err)
					}
					cov, err := est.thresholdCov()
					if err != nil {
						t.Fatal(err)
					}
					deltas[run], ses[run], iters[run] = est.delta(est.eta), constrainedSE(cov, est.ermWeights()), n
				}
				if len(deltas[0]) != 36 {
					t.Fatalf("got %d thresholds; want 36", len(deltas[0]))
				}
				for h := range deltas[0] {
					if got, want := deltas[1][h], deltas[0][h]; math.Abs(got-want) > 1e-9 {
						t.Errorf("threshold %d: got %.12f; want %.12f (exact Newton)", h, got, want)
					}
					if got, want := ses[1][h], ses[0][h]; math.Abs(got-want) > 1e-9*want {
						t.Errorf("SE %d: got %.12f; want %.12f (exact Newton)", h, got, want)
					}
				}
				t.Logf("iterations: exact Newton %d, quasi-Newton %d", iters[0], iters[1])
			})
		}
	}
}

// TestBFGSUpdateSecant: the updated Hessian maps the step onto the change of the gradient (the
// secant condition) and stays symmetric; without positive curvature it is left alone.
func TestBFGSUpdateSecant(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		s, g1   []float64
		updated bool
	}{
		{"positive curvature", []float64{0.3, -0.2, 0.1}, []float64{1.1, -0.4, 0.5}, true},
		{"negative curvature", []float64{0.3, -0.2, 0.1}, []float64{-1, 0.4, -0.5}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := []float64{4, 1, 0, 1, 3, 0.5, 0, 0.5, 2}
			orig := append([]float64(nil), h...)
			g0 := []float64{0, 0, 0}
			bfgsUpdate(h, c.s, g0, c.g1)
			for i := range 3 {
				hs := 0.0
				for j := range 3 {
					hs += h[i*3+j] * c.s[j]
					if got, want := h[i*3+j], h[j*3+i]; got != want {
						t.Errorf("h[%d][%d] = %v; want h[%d][%d] = %v", i, j, got, j, i, want)
					}
				}
				if c.updated {
					if got, want := hs, c.g1[i]; math.Abs(got-want) > 1e-12 {
						t.Errorf("(hs)[%d] = %v; want y[%d] = %v", i, got, i, want)
					}
				}
			}
			if !c.updated {
				for k := range h {
					if h[k] != orig[k] {
						t.Errorf("h[%d] = %v; want %v (unchanged)", k, h[k], orig[k])
					}
				}
			}
		})
	}
}
