package measure

import (
	"math"
	"testing"
)

// testFramework returns the lexile parameters of METHOD.md, built independently of the bundle so
// that the math tests do not depend on the loader.
func testFramework(t testing.TB, name string) *Framework {
	t.Helper()
	f := &Framework{
		Name: "lexile", Label: "L", NegativePrefix: "BR",
		UnitsPerLogit: 180, SuccessAtMatch: 0.75,
		DisplayMin: -400, DisplayMax: 1825,
		GradeMax: []float64{850, 900, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1725, 1750, 1800, 1825},
		Norm:     []float64{-60, 140, 320, 515, 628, 738, 833, 900, 953, 1010, 1050, 1075, 1090},
		GrowthSD: 75, PopulationSD: 300, ExtremeAdjust: 0.3, StrandSpread: 100,
	}
	if name == "quantile" {
		f.Name, f.Label, f.NegativePrefix = "quantile", "Q", "EM"
		f.SuccessAtMatch = 0.5
		f.DisplayMax = 1650
		f.GradeMax = []float64{600, 675, 725, 975, 1075, 1125, 1200, 1325, 1450, 1475, 1500, 1575, 1650}
		f.Norm = []float64{-130, 138, 290, 490, 600, 683, 770, 830, 875, 913, 963, 1065, 1100}
	}
	if err := f.Prepare(); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return f
}

// refLogPost is the log-posterior written the plain way: Σ log P for the right answers and
// Σ log(1 − P) for the wrong ones (any pattern with raw score r), plus the normal log-prior.
// x and the result are in measure units.
func refLogPost(f *Framework, t Test, prior Normal, x float64) float64 {
	lambda := math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch))
	right := t.Correct
	ll := 0.0
	for _, d := range t.Items {
		z := (x-d.Measure)/f.UnitsPerLogit + lambda
		for c := 0; c < d.Count; c++ {
			if right > 0 {
				ll += -math.Log1p(math.Exp(-z)) // log P
				right--
			} else {
				ll += -math.Log1p(math.Exp(z)) // log(1 − P)
			}
		}
	}
	u := (x - prior.Mean) / prior.SD
	return ll - 0.5*u*u
}

// refPosterior integrates the posterior by the trapezoid rule on a dense grid (points points over
// ±12 posterior SDs, found from a first coarse pass), in measure units.
func refPosterior(f *Framework, t Test, prior Normal, points int) Normal {
	centre, width := prior.Mean, 30*prior.SD+30*f.UnitsPerLogit
	for pass := 0; pass < 3; pass++ {
		lo, hi := centre-width, centre+width
		h := (hi - lo) / float64(points)
		top := math.Inf(-1)
		for i := 0; i <= points; i++ {
			top = math.Max(top, refLogPost(f, t, prior, lo+float64(i)*h))
		}
		var m0, m1, m2 float64
		for i := 0; i <= points; i++ {
			x := lo + float64(i)*h
			w := 1.0
			if i == 0 || i == points {
				w = 0.5
			}
			p := w * math.Exp(refLogPost(f, t, prior, x)-top)
			m0 += p
			m1 += p * (x - centre)
			m2 += p * (x - centre) * (x - centre)
		}
		mean := m1 / m0
		sd := math.Sqrt(m2/m0 - mean*mean)
		centre, width = centre+mean, 12*sd
		if pass == 2 {
			return Normal{Mean: centre, SD: sd}
		}
	}
	panic("unreachable")
}
