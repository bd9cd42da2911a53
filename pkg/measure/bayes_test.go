package measure

import (
	"context"
	"math"
	"testing"
)

// TestBayesMatchesDenseGrid cross-checks the EAP mean and posterior SD against a dense trapezoid
// integration (refPosterior: 20,000 steps over the window within e^−60 of the maximum) of the
// plainly written posterior.
func TestBayesMatchesDenseGrid(t *testing.T) {
	t.Parallel()
	type tc struct {
		name  string
		fw    string
		items []Difficulty
		r     int
		prior Normal
	}
	cases := []tc{
		{"40 items typical", "lexile", spread(40, 600, 360), 27, Normal{550, 120}},
		{"40 items perfect", "lexile", spread(40, 600, 360), 40, Normal{700, 300}},
		{"40 items zero", "quantile", spread(40, 600, 360), 0, Normal{500, 300}},
		{"one item right", "lexile", spread(1, 500, 0), 1, Normal{500, 100}},
		{"one item wrong, vague prior", "quantile", spread(1, 500, 0), 0, Normal{500, 1000}},
		{"prior far above the test", "lexile", spread(10, 500, 200), 0, Normal{1100, 300}},
		{"prior far below, all right", "lexile", spread(10, 500, 200), 10, Normal{-100, 300}},
		{"strand-sized", "quantile", spread(4, 700, 150), 3, Normal{650, 100}},
		{"counts", "lexile", []Difficulty{{Measure: 200, Count: 30}, {Measure: 900, Count: 20}}, 31, Normal{600, 250}},
		{"tight prior", "lexile", spread(100, 800, 500), 64, Normal{800, 5}},
		{"200 items", "quantile", spread(200, 800, 700), 111, Normal{700, 200}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := testFramework(t, c.fw)
			tt := Test{Items: c.items, Correct: c.r}
			got, err := f.Bayes(tt, c.prior)
			if err != nil {
				t.Fatal(err)
			}
			want := refPosterior(f, tt, c.prior, 20000)
			s := f.UnitsPerLogit
			if d := math.Abs(got.Ability-want.Mean) / s; d > 1e-6 {
				t.Errorf("posterior mean %v; want %v (dense grid), %.2g logits apart", got.Ability, want.Mean, d)
			}
			if d := math.Abs(got.Uncertainty-want.SD) / s; d > 1e-6 {
				t.Errorf("posterior SD %v; want %v (dense grid), %.2g logits apart", got.Uncertainty, want.SD, d)
			}
		})
	}
}

// TestBayesFallbackPath: a posterior far from normal (a zero score with a wide prior well above
// the items) makes the two Gauss–Hermite rules disagree; the adaptive trapezoid must then hold the
// 1e-6 logit accuracy where Gauss–Hermite alone misses it.
func TestBayesFallbackPath(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	tt := Test{Items: spread(10, 500, 200), Correct: 0}
	prior := Normal{Mean: 1500, SD: 1000}
	it, err := f.prep.prepare(tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu, tau := (prior.Mean-it.centre)/f.UnitsPerLogit, prior.SD/f.UnitsPerLogit
	mode, curv := it.mode(mu, tau)
	scale := math.Sqrt2 / math.Sqrt(curv)
	top := it.logPost(mode, mu, tau)
	gh := it.gaussHermite(mainRule, mode, scale, top, mu, tau)
	ref := refPosterior(f, tt, prior, 20000)
	refMean, refSD := (ref.Mean-it.centre)/f.UnitsPerLogit, ref.SD/f.UnitsPerLogit
	if math.Abs(gh.Mean-refMean) < 1e-6 {
		t.Fatalf("Gauss–Hermite alone is within 1e-6 here (%v vs %v); the case no longer tests the fallback", gh.Mean, refMean)
	}
	dense, err := it.posteriorDense(context.Background(), mode, scale, top, mu, tau)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(dense.Mean - refMean); !(d <= 1e-6) {
		t.Errorf("fallback mean %v; want %v, %.2g logits apart", dense.Mean, refMean, d)
	}
	if d := math.Abs(dense.SD - refSD); !(d <= 1e-6) {
		t.Errorf("fallback SD %v; want %v, %.2g logits apart", dense.SD, refSD, d)
	}
	// A reference value far below the true maximum (the old failure: exp overflowed, Inf/Inf)
	// must not matter: the fallback rebases on the largest log-posterior it meets.
	if low, _ := it.posteriorDense(context.Background(), mode, scale, top-5000, mu, tau); !(math.Abs(low.Mean-dense.Mean) <= 1e-9 && math.Abs(low.SD-dense.SD) <= 1e-9) {
		t.Errorf("fallback with a reference 5000 below the maximum = %v; want %v", low, dense)
	}
	got, err := f.Bayes(tt, prior)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(got.Ability-ref.Mean) / f.UnitsPerLogit; !(d <= 1e-6) {
		t.Errorf("Bayes mean %v; want %v", got.Ability, ref.Mean)
	}
}

func TestBayesInvariants(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	items := spread(40, 700, 360)
	for _, r := range []int{0, 5, 20, 33, 40} {
		std, err := f.Standard(Test{Items: items, Correct: r})
		if err != nil {
			t.Fatal(err)
		}
		bay, err := f.Bayes(Test{Items: items, Correct: r}, Normal{Mean: 700, SD: 200})
		if err != nil {
			t.Fatal(err)
		}
		if bay.Uncertainty >= std.Uncertainty {
			t.Errorf("r=%d: Bayes SD %v is not below the standard error %v", r, bay.Uncertainty, std.Uncertainty)
		}
	}
	// Raw score up → Bayes ability up, too.
	prev := math.Inf(-1)
	for r := 0; r <= 40; r++ {
		bay, err := f.Bayes(Test{Items: items, Correct: r}, Normal{Mean: 700, SD: 200})
		if err != nil {
			t.Fatal(err)
		}
		if bay.Ability <= prev {
			t.Errorf("r=%d: Bayes ability %v is not above %v", r, bay.Ability, prev)
		}
		prev = bay.Ability
	}
}

// TestEAPApproachesMLE: as the prior widens the posterior mode converges to the MLE, the
// posterior SD to the standard error, and the EAP to the MLE up to the likelihood's own skew,
// which shrinks as items are added.
func TestEAPApproachesMLE(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	s := f.UnitsPerLogit
	prevGap := math.Inf(1)
	for _, n := range []int{60, 240, 960} {
		tt := Test{Items: spread(n, 600, 500), Correct: n * 2 / 3}
		std, err := f.Standard(tt)
		if err != nil {
			t.Fatal(err)
		}
		it, err := f.prep.prepare(tt, nil)
		if err != nil {
			t.Fatal(err)
		}
		prevMode := math.Inf(1)
		for _, tau := range []float64{50, 200, 1000, 1e4, 1e5, 1e6, 1e7} {
			mode, _ := it.mode((0-it.centre)/s, tau/s)
			gap := math.Abs(it.centre + s*mode - std.Ability)
			if gap >= prevMode && gap > 1e-9 {
				t.Errorf("n=%d τ=%v: |mode − MLE| = %v did not shrink from %v", n, tau, gap, prevMode)
			}
			prevMode = gap
		}
		if prevMode/s > 1e-6 {
			t.Errorf("n=%d: mode under τ=1e7 is %v units from the MLE", n, prevMode)
		}
		bay, err := f.Bayes(tt, Normal{Mean: 0, SD: 1e7})
		if err != nil {
			t.Fatal(err)
		}
		gap := math.Abs(bay.Ability - std.Ability)
		if gap > 0.05*std.Uncertainty || gap >= prevGap {
			t.Errorf("n=%d: |EAP − MLE| = %v; want below 5%% of the SE %v and below %v (fewer items)", n, gap, std.Uncertainty, prevGap)
		}
		prevGap = gap
		if d := math.Abs(bay.Uncertainty - std.Uncertainty); d > 0.02*std.Uncertainty {
			t.Errorf("n=%d: posterior SD %v vs SE %v", n, bay.Uncertainty, std.Uncertainty)
		}
	}
}

func TestBayesCertainPrior(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	prior := Normal{Mean: 640, SD: 1e-6}
	got, err := f.Bayes(Test{Items: spread(10, 500, 100), Correct: 10}, prior)
	if err != nil {
		t.Fatal(err)
	}
	if got.Ability != prior.Mean || got.Uncertainty != prior.SD {
		t.Errorf("Bayes with a certain prior = %v; want the prior %v", got, prior)
	}
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		prior, obs, want Normal
	}{
		{Normal{500, 100}, Normal{700, 100}, Normal{600, 100 / math.Sqrt2}},
		{Normal{0, 3}, Normal{10, 4}, Normal{(0/9.0 + 10/16.0) / (1/9.0 + 1/16.0), math.Sqrt(1 / (1/9.0 + 1/16.0))}},
		{Normal{500, 100}, Normal{900, 0}, Normal{900, 0}},
		{Normal{500, 0}, Normal{900, 50}, Normal{500, 0}},
		{Normal{500, 0}, Normal{900, 0}, Normal{700, 0}},
		{Normal{500, math.Inf(1)}, Normal{900, 50}, Normal{900, 50}},
		{Normal{500, 40}, Normal{900, math.Inf(1)}, Normal{500, 40}},
	}
	for _, c := range cases {
		got := Update(c.prior, c.obs)
		if math.Abs(got.Mean-c.want.Mean) > 1e-12 || math.Abs(got.SD-c.want.SD) > 1e-12 {
			t.Errorf("Update(%v, %v) = %v; want %v", c.prior, c.obs, got, c.want)
		}
	}
}
