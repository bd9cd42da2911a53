package measure

import (
	"math"
	"testing"
)

// TestFitMomentsMatchLogSpace: the booklet's moments by powers of z (one exp an evaluation)
// equal pcmMoments' log-space ones, and its MLE pcmLogitMLE's, for every inner raw score, with
// steps near θ, disordered, 300 logits away (where the log-space evaluation takes over) and 16
// of an item (past the stack buffer); the extreme scores are taken at θ = 0.
func TestFitMomentsMatchLogSpace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps [][]float64
	}{
		{"ordered", [][]float64{{-1, 0.5}, {1, -1, 0}, {0.3}, {-2, 2}}},
		{"wide", [][]float64{{-4, -1, 2, 5}, {0.1, 0.2, 0.3}, {3}, {-3}}},
		{"far", [][]float64{{-300, -299}, {0.5, 1}, {300}, {-1, 0, 1}}},
		{"16 steps", [][]float64{{-3, -2.6, -2.2, -1.8, -1.4, -1, -0.6, -0.2, 0.2, 0.6, 1, 1.4, 1.8, 2.2, 2.6, 3}, {0.5}, {-0.5, 0.5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var delta []float64
			var top, off []int
			b := &booklet{}
			total := 0
			for k, st := range c.steps {
				off = append(off, len(delta))
				delta = append(delta, st...)
				top = append(top, len(st))
				b.items = append(b.items, k)
				total += len(st)
			}
			b.n = make([]float64, total+1)
			var fm fitMoments
			fm.setup(b, delta, top, off)
			if fm.total != total {
				t.Fatalf("M: got %d; want %d", fm.total, total)
			}
			for r := 0; r <= total; r++ {
				th := 0.0
				if r > 0 && r < total {
					th = fm.mle(r) + fm.c
					// With steps 300 logits apart Σ E(θ) = r holds to 1e-16 over a wide flat
					// range of θ, where no two solvers need agree; elsewhere they must.
					if want := pcmLogitMLE(c.steps, r); c.name != "far" && math.Abs(th-want) > 1e-10 {
						t.Errorf("r = %d: got θ %v; want %v (pcmLogitMLE)", r, th, want)
					}
				}
				got := fm.at(nil, r)
				if len(got) != 2*len(c.steps) {
					t.Fatalf("r = %d: got %d moments; want %d", r, len(got), 2*len(c.steps))
				}
				sum := 0.0
				for l, st := range c.steps {
					ex, v, _ := pcmMoments(st, th)
					if math.Abs(got[2*l]-ex) > 1e-12 || math.Abs(got[2*l+1]-v) > 1e-12 {
						t.Errorf("r = %d, item %d at θ %v: got E %v V %v; want %v %v", r, l, th, got[2*l], got[2*l+1], ex, v)
					}
					sum += got[2*l]
				}
				if r > 0 && r < total && math.Abs(sum-float64(r)) > 1e-10 {
					t.Errorf("r = %d: got Σ E %v; want %d", r, sum, r)
				}
			}
		})
	}
}
