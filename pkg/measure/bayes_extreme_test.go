package measure

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// cycle returns n unit items whose difficulties cycle through distinct values evenly spaced over
// [lo, hi]: a long test (the unit-count path of the estimators) whose reference integration stays
// cheap because refModel groups equal difficulties.
func cycle(n, distinct int, lo, hi float64) []Difficulty {
	d := make([]Difficulty, n)
	for i := range d {
		u := 0.0
		if distinct > 1 {
			u = float64(i%distinct) / float64(distinct-1)
		}
		d[i] = Difficulty{Measure: lo + (hi-lo)*u, Count: 1}
	}
	return d
}

// demoItems returns the difficulties of demo items prefix000001 to prefix00000n.
func demoItems(t testing.TB, prefix string, n int) []Difficulty {
	t.Helper()
	var d []Difficulty
	for i := 1; i <= n; i++ {
		item, ok := Demo().Item(fmt.Sprintf("%s%06d", prefix, i))
		if !ok {
			t.Fatalf("demo item %s%06d is missing", prefix, i)
		}
		d = append(d, Difficulty{Measure: item.Difficulty, Count: 1})
	}
	return d
}

// checkPosterior asserts that Bayes gives a finite estimate with a positive SD that matches the
// reference integration within tol logits.
func checkPosterior(t *testing.T, f *Framework, tt Test, prior Normal, points int, tol float64) {
	t.Helper()
	got, err := f.Bayes(tt, prior)
	if err != nil {
		t.Fatalf("Bayes: %v", err)
	}
	if !finite(got.Ability) || !finite(got.Uncertainty) || got.Uncertainty <= 0 {
		t.Fatalf("Bayes = %v; want a finite ability and a positive, finite uncertainty", got)
	}
	want := refPosterior(f, tt, prior, points)
	s := f.UnitsPerLogit
	if d := math.Abs(got.Ability-want.Mean) / s; !(d <= tol) {
		t.Errorf("posterior mean %v; want %v (reference), %.2g logits apart", got.Ability, want.Mean, d)
	}
	if d := math.Abs(got.Uncertainty-want.SD) / s; !(d <= tol) {
		t.Errorf("posterior SD %v; want %v (reference), %.2g logits apart", got.Uncertainty, want.SD, d)
	}
}

// TestBayesReviewerCases are the reported defects: a zero score with the prior far above the
// items gave NaN (abilityDisplay "") and took seconds (the 5,000-item case 35 s of CPU).
func TestBayesReviewerCases(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	mod400 := make([]Difficulty, 5000)
	for i := range mod400 {
		mod400[i] = Difficulty{Measure: float64(i % 400), Count: 1}
	}
	cases := []struct {
		name  string
		items []Difficulty
		r     int
		prior Normal
	}{
		{"5000 items at 0 in one block, all wrong, prior 3000±300", []Difficulty{{Measure: 0, Count: 5000}}, 0, Normal{3000, 300}},
		{"150 demo items all wrong, prior 1800±300", demoItems(t, "L", 150), 0, Normal{1800, 300}},
		{"all 2000 lexile demo items wrong, prior 1800±300", append(demoItems(t, "L", 1600), demoItems(t, "S", 400)...), 0, Normal{1800, 300}},
		{"5000 items i%400 all wrong, prior 3000±300", mod400, 0, Normal{3000, 300}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prior := f.Grow(c.prior, 0) // the services grow the prior by elapsedDays first
			checkPosterior(t, f, Test{Items: c.items, Correct: c.r}, prior, 4000, 1e-6)
		})
	}
}

// TestBayesExtremes: all wrong, all right and half right on 1 to 5,000 items, with priors from
// −3000 to 3000 and SDs from 1 to 1000 units, items at ±10,000 — every estimate is finite, its
// SD positive, and both match the reference integration within 1e-6 logits.
func TestBayesExtremes(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	sets := []struct {
		name  string
		items []Difficulty
	}{
		{"1 item", spread(1, 500, 0)},
		{"40 items", spread(40, 500, 360)},
		{"150 items", cycle(150, 150, -300, 1500)},
		{"2000 items", cycle(2000, 50, -400, 1800)},
		{"5000 items", cycle(5000, 50, 0, 399)},
		{"5000 in one block", []Difficulty{{Measure: 500, Count: 5000}}},
		{"40 items at +10000", cycle(40, 1, 10000, 10000)},
		{"40 items at -10000", cycle(40, 1, -10000, -10000)},
		{"40 items at ±10000", cycle(40, 2, -10000, 10000)},
		{"2000 in blocks at ±10000", []Difficulty{{Measure: -10000, Count: 1000}, {Measure: 10000, Count: 1000}}},
	}
	for _, set := range sets {
		n := 0
		for _, d := range set.items {
			n += d.Count
		}
		scores := []int{0, n}
		if n > 1 {
			scores = append(scores, n/2)
		}
		for _, r := range scores {
			for _, mean := range []float64{-3000, 0, 3000} {
				for _, sd := range []float64{1, 300, 1000} {
					prior := Normal{Mean: mean, SD: sd}
					t.Run(fmt.Sprintf("%s/r=%d/prior=%v±%v", strings.ReplaceAll(set.name, " ", "_"), r, mean, sd), func(t *testing.T) {
						t.Parallel()
						checkPosterior(t, f, Test{Items: set.items, Correct: r}, prior, 6000, 1e-6)
					})
				}
			}
		}
	}
}

// TestModeIsRoot: the mode search ends on the root of ℓ'(x) = r − Σ P_i(x) − (x − mu)/tau² in
// every extreme case (before the fix, a zero score with the prior far above the items left it at
// the prior mean after 200 iterations). ℓ' is computed independently, with the public model.
func TestModeIsRoot(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	s := f.UnitsPerLogit
	mod400 := cycle(5000, 400, 0, 399)
	cases := []struct {
		name  string
		items []Difficulty
		r     int
		prior Normal
	}{
		{"block of 5000, all wrong, prior 3000±300", []Difficulty{{Measure: 0, Count: 5000}}, 0, Normal{3000, 300}},
		{"5000 i%400, all wrong, prior 3000±300", mod400, 0, Normal{3000, 300}},
		{"5000 i%400, all right, prior -3000±300", mod400, 5000, Normal{-3000, 300}},
		{"5000 i%400, all wrong, prior 3000±1", mod400, 0, Normal{3000, 1}},
		{"5000 i%400, all wrong, prior 3000±1000", mod400, 0, Normal{3000, 1000}},
		{"one item right, prior -3000±1000", spread(1, 500, 0), 1, Normal{-3000, 1000}},
		{"40 at ±10000, half right, prior 0±1000", cycle(40, 2, -10000, 10000), 20, Normal{0, 1000}},
		{"40 at 10000, all right, prior -3000±300", cycle(40, 1, 10000, 10000), 40, Normal{-3000, 300}},
		{"typical", spread(40, 600, 360), 27, Normal{550, 120}},
		{"vague prior", spread(40, 600, 360), 27, Normal{0, 1e6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			it, err := f.prep.prepare(Test{Items: c.items, Correct: c.r}, nil)
			if err != nil {
				t.Fatal(err)
			}
			mu, tau := (c.prior.Mean-it.centre)/s, c.prior.SD/s
			x, curv := it.mode(mu, tau)
			if !finite(x) || !finite(curv) || curv <= 0 {
				t.Fatalf("mode %v, curvature %v; want finite, curvature positive", x, curv)
			}
			slope := -accurateExcess(f, c.items, it.centre+s*x, float64(c.r)) - (x-mu)/(tau*tau)
			if d := math.Abs(slope) / curv; !(d <= 1e-9) {
				t.Errorf("mode %v (%v units): ℓ' = %v, %.2g logits from the root", x, it.centre+s*x, slope, d)
			}
		})
	}
}

// TestPosteriorNeverNaN: whatever goes wrong inside the integration, posterior reports an
// error rather than a NaN (here items whose k is NaN, which prepare never produces).
func TestPosteriorNeverNaN(t *testing.T) {
	t.Parallel()
	it := items{k: []float64{math.NaN()}, w: []float64{1}, n: 1, r: 1}
	got, err := it.posterior(context.Background(), 0, 1)
	if err == nil || !strings.Contains(err.Error(), "posterior integration failed") {
		t.Errorf("posterior with NaN items = %v, %v; want a \"posterior integration failed\" error", got, err)
	}
}
