package measure

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// brutePolyBooklet enumerates every response pattern of a booklet's items (tops, thresholds delta in
// the pestimation layout) and returns Σ_r n_r log γ_r, the expected category counts and the
// information in category indicators, straight from the definitions: P(x | r) ∝ Π_i ε_{i,x_i}.
func brutePolyBooklet(tops []int, delta, n []float64) (ll float64, e, info []float64) {
	off := []int{0}
	for _, m := range tops {
		off = append(off, off[len(off)-1]+m)
	}
	size := off[len(tops)]
	total := size
	gamma := make([]float64, total+1)
	type pattern struct {
		x      []int
		weight float64
		score  int
	}
	var patterns []pattern
	x := make([]int, len(tops))
	for {
		w, r := 1.0, 0
		for i, xi := range x {
			cum := 0.0
			for s := 0; s < xi; s++ {
				cum += delta[off[i]+s]
			}
			w *= math.Exp(-cum)
			r += xi
		}
		gamma[r] += w
		patterns = append(patterns, pattern{append([]int(nil), x...), w, r})
		i := 0
		for ; i < len(x); i++ {
			if x[i] < tops[i] {
				x[i]++
				break
			}
			x[i] = 0
		}
		if i == len(x) {
			break
		}
	}
	e = make([]float64, size)
	info = make([]float64, size*size)
	for r, nr := range n {
		if nr > 0 {
			ll += nr * math.Log(gamma[r])
		}
	}
	for r, nr := range n {
		if nr == 0 {
			continue
		}
		p := make([]float64, size)
		joint := make([]float64, size*size)
		for _, pt := range patterns {
			if pt.score != r {
				continue
			}
			pr := pt.weight / gamma[r]
			for i, xi := range pt.x {
				if xi == 0 {
					continue
				}
				a := off[i] + xi - 1
				p[a] += pr
				for j, xj := range pt.x {
					if xj > 0 {
						joint[a*size+off[j]+xj-1] += pr
					}
				}
			}
		}
		for a := range size {
			e[a] += nr * p[a]
			for b := range size {
				info[a*size+b] += nr * (joint[a*size+b] - p[a]*p[b])
			}
		}
	}
	return ll, e, info
}

// TestPESFMatchesEnumeration: a booklet's log-likelihood part, expected category counts and
// information (every pair of categories, same item and different items) from the summation and
// adjoint algorithms equal those of enumerating every response pattern, for booklets of one to
// five items of one to four steps, disordered steps, a far step, and counts at every score or
// only at one (a person's own booklet).
func TestPESFMatchesEnumeration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 8))
	cases := []struct {
		tops []int
		far  bool
		one  bool
	}{
		{[]int{2}, false, false},
		{[]int{1, 1}, false, false},
		{[]int{2, 3}, false, false},
		{[]int{1, 3, 2}, false, true},
		{[]int{4, 1, 2, 3}, false, false},
		{[]int{3, 3, 3, 3, 3}, false, false},
		{[]int{2, 4, 1, 3, 2}, true, false},
		{[]int{4, 4, 2, 1, 3}, false, true},
	}
	for c, tc := range cases {
		t.Run(fmt.Sprint(tc.tops, tc.far, tc.one), func(t *testing.T) {
			size := 0
			for _, m := range tc.tops {
				size += m
			}
			delta := make([]float64, size)
			for h := range delta {
				delta[h] = 2 * rng.NormFloat64()
			}
			if tc.far {
				delta[1] += 10
			}
			n := make([]float64, size+1)
			for r := 1; r < size; r++ {
				if !tc.one || r == size/2 {
					n[r] = float64(1 + rng.IntN(20))
				}
			}
			wantLL, wantE, wantInfo := brutePolyBooklet(tc.tops, delta, n)
			off := []int{0}
			items := make([]int, len(tc.tops))
			for i, m := range tc.tops {
				off = append(off, off[i]+m)
				items[i] = i
			}
			var w pesfWork
			e := make([]float64, size)
			info := make([]float64, size*size)
			ll, err := w.accumulate(&booklet{items: items, n: n}, delta, tc.tops, off, e, info, size)
			if err != nil {
				t.Fatal(err)
			}
			mirrorUpper(info, size)
			llOnly, err := w.loglik(&booklet{items: items, n: n}, delta, tc.tops, off)
			if err != nil {
				t.Fatal(err)
			}
			near := func(what string, got, want float64) {
				if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Errorf("case %d %s: got %.15g; want %.15g", c, what, got, want)
				}
			}
			near("log-likelihood", ll, wantLL)
			near("log-likelihood alone", llOnly, wantLL)
			for a := range size {
				near(fmt.Sprintf("E[%d]", a), e[a], wantE[a])
				for b := range size {
					near(fmt.Sprintf("info[%d,%d]", a, b), info[a*size+b], wantInfo[a*size+b])
				}
			}
		})
	}
}

// TestPCMDerivativesMatchDifferences: the gradient and Hessian of the objective in η (PCM
// thresholds; RSM locations and steps) equal central differences of the objective and of the
// gradient, on a small simulated data set with blanks.
func TestPCMDerivativesMatchDifferences(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	steps := [][]float64{{-1, 0.5}, {-0.5, 0.2, 1}, {0.3}, {-1.2, -0.2, 0.4}, {0.8, 0.1}}
	resp := simulatePCM(rng, 300, steps, 0, 1, func(p, i int) bool { return rng.IntN(10) < 8 })
	for _, model := range []string{ModelPCM, ModelRSM} {
		t.Run(model, func(t *testing.T) {
			r := resp
			if model == ModelRSM {
				r = simulatePCM(rng, 300, [][]float64{{-1, 0, 1}, {-0.5, 0.5, 1.5}, {-2, -1, 0}, {0, 1, 2}}, 0, 1,
					func(p, i int) bool { return rng.IntN(10) < 8 })
			}
			top := make([]int, len(r.Items))
			high := 0
			for _, row := range r.Cells {
				for i, x := range row {
					top[i] = max(top[i], int(x))
					high = max(high, int(x))
				}
			}
			if model == ModelRSM {
				for i := range top {
					top[i] = high
				}
			}
			d := pruneScores(r, top, model == ModelRSM)
			est := newPEstimation(d, d.keptItems(), model == ModelRSM)
			eta := append([]float64(nil), est.eta...)
			for k := range eta {
				eta[k] += 0.3 * rng.NormFloat64()
			}
			_, grad, info, err := est.derivatives(context.Background(), eta, hessExact)
			if err != nil {
				t.Fatal(err)
			}
			q := len(eta)
			const h = 1e-5
			for k := range q {
				up, down := append([]float64(nil), eta...), append([]float64(nil), eta...)
				up[k] += h
				down[k] -= h
				fu, _ := est.objective(up)
				fd, _ := est.objective(down)
				if got, want := grad[k], (fu-fd)/(2*h); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("gradient %d: got %v; want %v", k, got, want)
				}
				_, gu, _, _ := est.derivatives(context.Background(), up, hessNone)
				_, gd, _, _ := est.derivatives(context.Background(), down, hessNone)
				for j := range q {
					if got, want := info[k*q+j], (gu[j]-gd[j])/(2*h); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
						t.Errorf("Hessian [%d,%d]: got %v; want %v", k, j, got, want)
					}
				}
			}
		})
	}
}
