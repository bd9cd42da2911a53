package measure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestStepCacheMatchesDirect: a booklet evaluated with the pass's cached exponentials gives the
// log-likelihood, expected counts and information of one that takes its own, to 1e-12
// relative, for thresholds near each other, an item 290 logits out (its own A_ih in range, the
// booklet's mean shifted), and one 400 out (outside: the booklet falls back to its own).
func TestStepCacheMatchesDirect(t *testing.T) {
	t.Parallel()
	tops := []int{3, 1, 2, 3, 2}
	off := []int{0}
	for i, m := range tops {
		off = append(off, off[i]+m)
	}
	size := off[len(tops)]
	for _, c := range []struct {
		name     string
		far      float64
		fallback bool
	}{{"near", 0, false}, {"290 out", 290, false}, {"400 out", 400, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(3, 9))
			delta := make([]float64, size)
			for h := range delta {
				delta[h] = rng.NormFloat64()
			}
			// Item 1 (one step) far out: a booklet without it is centred far from c0.
			delta[off[1]] += c.far
			var cache stepCache
			cache.prepare(delta, tops, off)
			if got := !cache.ok[1]; got != c.fallback {
				t.Fatalf("item 1 outside the cache's range: got %v; want %v", got, c.fallback)
			}
			for bi, items := range [][]int{{0, 1, 2, 3, 4}, {0, 2, 3, 4}, {1, 3}} {
				t.Run(fmt.Sprint(items), func(t *testing.T) {
					most := 0
					for _, i := range items {
						most += tops[i]
					}
					n := make([]float64, most+1)
					for r := 1; r < most; r++ {
						n[r] = float64(1 + (r+bi)%3)
					}
					b := booklet{items: items, n: n}
					var direct, viaCache pesfWork
					viaCache.steps = cache
					eA, eB := make([]float64, size), make([]float64, size)
					iA, iB := make([]float64, size*size), make([]float64, size*size)
					llA, errA := direct.accumulate(&b, delta, tops, off, eA, iA, size)
					llB, errB := viaCache.accumulate(&b, delta, tops, off, eB, iB, size)
					if errA != nil || errB != nil {
						t.Fatalf("got errors %v, %v; want none", errA, errB)
					}
					mirrorUpper(iA, size)
					mirrorUpper(iB, size)
					near := func(what string, got, want float64) {
						if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
							t.Errorf("%s: got %.17g; want %.17g (direct)", what, got, want)
						}
					}
					near("log-likelihood", llB, llA)
					for a := range size {
						near(fmt.Sprintf("E[%d]", a), eB[a], eA[a])
						for x := range size {
							near(fmt.Sprintf("info[%d,%d]", a, x), iB[a*size+x], iA[a*size+x])
						}
					}
				})
			}
		})
	}
}

// TestStepCacheFillRange: a booklet centred so far from the cache's mean that a ρ^h would pass
// e^300 is refused (the booklet then takes its own exponentials); at the bound it is filled.
func TestStepCacheFillRange(t *testing.T) {
	t.Parallel()
	tops, off := []int{3, 2}, []int{0, 3, 5}
	var cache stepCache
	cache.prepare([]float64{-1, 0, 1, -0.5, 0.5}, tops, off)
	for _, c := range []struct {
		shift float64
		want  bool
	}{{100, true}, {-100, true}, {100.001, false}, {-100.001, false}} {
		t.Run(fmt.Sprint(c.shift), func(t *testing.T) {
			t.Parallel()
			eps := make([][]float64, 2)
			if got := cache.fill(eps, []int{0, 1}, tops, off, cache.c0+c.shift); got != c.want {
				t.Fatalf("fill at a shift of %v: got %v; want %v", c.shift, got, c.want)
			}
			if !c.want {
				return
			}
			for l, i := range []int{0, 1} {
				cum := 0.0
				for h := 1; h <= tops[i]; h++ {
					cum += []float64{-1, 0, 1, -0.5, 0.5}[off[i]+h-1] - (cache.c0 + c.shift)
					if got, want := eps[l][h], math.Exp(-cum); math.Abs(got-want) > 1e-12*want {
						t.Errorf("ε'[%d][%d]: got %g; want %g", l, h, got, want)
					}
				}
			}
		})
	}
}
