package measure

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func TestForecastMatchesNormal(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	prior := Normal{Mean: 600, SD: 80}
	cuts := []float64{400, 550, 700, 900}
	got := f.Forecast(prior, 200, 40, cuts)
	g := f.Grow(prior, 200)
	mu, sigma := g.Mean, math.Sqrt(g.SD*g.SD+40*40)
	if got.Ability != mu || math.Abs(got.Uncertainty-sigma) > 1e-12 {
		t.Errorf("forecast N(%v, %v); want N(%v, %v)", got.Ability, got.Uncertainty, mu, sigma)
	}
	n := distuv.Normal{Mu: mu, Sigma: sigma}
	edges := append(append([]float64{math.Inf(-1)}, cuts...), math.Inf(1))
	for k := range got.Probabilities {
		want := n.CDF(edges[k+1]) - n.CDF(edges[k])
		if math.Abs(got.Probabilities[k]-want) > 1e-14 {
			t.Errorf("band %d: %v; want %v (gonum normal CDF)", k, got.Probabilities[k], want)
		}
	}
}

// TestForecastTails: far tails keep their relative precision (erfc, not 1 − Φ), every
// probability is >= 0 and the bands sum to 1 within 1e-12.
func TestForecastTails(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile")
	prior := Normal{Mean: 800, SD: 50}
	sigma := f.Forecast(prior, 0, 0, nil).Uncertainty
	for _, c := range []struct {
		name string
		cuts []float64
	}{
		{"12 SD above", []float64{800 + 12*sigma}},
		{"12 SD below", []float64{800 - 12*sigma}},
		{"both far", []float64{800 - 30*sigma, 800 - 20*sigma, 800 + 20*sigma, 800 + 38*sigma}},
		{"narrow middle band", []float64{800 - 1e-9, 800 + 1e-9}},
		{"all bands above", []float64{800 + 3*sigma, 800 + 4*sigma, 800 + 9*sigma}},
		{"all bands below", []float64{800 - 9*sigma, 800 - 4*sigma, 800 - 3*sigma}},
	} {
		got := f.Forecast(prior, 0, 0, c.cuts)
		if len(got.Probabilities) != len(c.cuts)+1 {
			t.Fatalf("%s: %d probabilities; want %d", c.name, len(got.Probabilities), len(c.cuts)+1)
		}
		if s := sum(got.Probabilities); math.Abs(s-1) > 1e-12 {
			t.Errorf("%s: probabilities sum to %v", c.name, s)
		}
		for k, p := range got.Probabilities {
			if p < 0 || math.IsNaN(p) {
				t.Errorf("%s: band %d probability %v", c.name, k, p)
			}
		}
	}
	// P(X >= μ + 12σ) = erfc(12/√2)/2 ≈ 1.78e-33, to full relative precision.
	got := f.Forecast(prior, 0, 0, []float64{800 + 12*sigma}).Probabilities[1]
	want := 0.5 * math.Erfc(12/math.Sqrt2)
	if math.Abs(got-want) > 1e-12*want || want < 1e-33 {
		t.Errorf("upper tail at 12 SD = %v; want %v", got, want)
	}
	// A band between 20 and 38 SD below the mean: lower-tail difference, not 0.
	got = f.Forecast(prior, 0, 0, []float64{800 - 38*sigma, 800 - 20*sigma}).Probabilities[1]
	want = 0.5*math.Erfc(20/math.Sqrt2) - 0.5*math.Erfc(38/math.Sqrt2)
	if math.Abs(got-want) > 1e-12*want || got == 0 {
		t.Errorf("band 20-38 SD below = %v; want %v", got, want)
	}
}

func TestForecastDegenerate(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	// No uncertainty at all: a point mass, X ≥ c iff μ ≥ c.
	probs := make([]float64, 3)
	bands(500, 0, []float64{400, 500}, probs)
	if probs[0] != 0 || probs[1] != 0 || probs[2] != 1 {
		t.Errorf("point mass at 500, cuts 400, 500: %v; want [0 0 1]", probs)
	}
	if got := f.Forecast(Normal{500, 50}, 0, 0, nil).Probabilities; len(got) != 1 || got[0] != 1 {
		t.Errorf("no cuts: %v; want [1]", got)
	}
}

func TestGroupAggregates(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	students := []Student{
		{Prior: Normal{400, 60}, ElapsedDays: 100},
		{Prior: Normal{800, 120}, ElapsedDays: 0},
		{Prior: Normal{1200, 30}, ElapsedDays: 365},
		{Prior: Normal{-200, 200}, ElapsedDays: 30},
	}
	cuts := []float64{300, 700, 1000}
	got := f.Group(students, 35, cuts)
	if len(got.Students) != len(students) {
		t.Fatalf("%d student forecasts; want %d", len(got.Students), len(students))
	}
	var mu, v float64
	props := make([]float64, len(cuts)+1)
	se := make([]float64, len(cuts)+1)
	for i, s := range students {
		one := f.Forecast(s.Prior, s.ElapsedDays, 35, cuts)
		g := got.Students[i]
		if g.Ability != one.Ability || g.Uncertainty != one.Uncertainty {
			t.Errorf("student %d: %v; want %v", i, g, one)
		}
		for k := range one.Probabilities {
			if g.Probabilities[k] != one.Probabilities[k] {
				t.Errorf("student %d band %d: %v; want %v", i, k, g.Probabilities[k], one.Probabilities[k])
			}
			props[k] += one.Probabilities[k] / 4
			se[k] += one.Probabilities[k] * (1 - one.Probabilities[k])
		}
		mu += one.Ability / 4
		v += one.Uncertainty * one.Uncertainty
	}
	if math.Abs(got.Ability-mu) > 1e-9 || math.Abs(got.Uncertainty-math.Sqrt(v)/4) > 1e-9 {
		t.Errorf("group N(%v, %v); want N(%v, %v)", got.Ability, got.Uncertainty, mu, math.Sqrt(v)/4)
	}
	for k := range props {
		if math.Abs(got.Proportions[k]-props[k]) > 1e-12 || math.Abs(got.StdErrs[k]-math.Sqrt(se[k])/4) > 1e-12 {
			t.Errorf("band %d: proportion %v ± %v; want %v ± %v", k, got.Proportions[k], got.StdErrs[k], props[k], math.Sqrt(se[k])/4)
		}
	}
	if s := sum(got.Proportions); math.Abs(s-1) > 1e-12 {
		t.Errorf("proportions sum to %v", s)
	}
	// Appending to one student's probabilities must not overwrite the next student's.
	_ = append(got.Students[0].Probabilities, 42)
	if got.Students[1].Probabilities[0] == 42 {
		t.Errorf("student probability slices share capacity")
	}
	empty := f.Group(nil, 35, cuts)
	if len(empty.Students) != 0 || empty.Ability != 0 || len(empty.Proportions) != 4 {
		t.Errorf("empty group = %+v; want zero aggregates with 4 bands", empty)
	}
}
