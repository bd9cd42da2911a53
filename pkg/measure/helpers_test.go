package measure

import (
	"math"
	"testing"
)

// testFramework returns the lexile parameters of docs/method.md, built independently of the bundle so
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

// refModel is the log-posterior written the plain way: Σ log P for the right answers and
// Σ log(1 − P) for the wrong ones (the first Correct items right: any pattern with raw score r
// gives the same posterior), plus the normal log-prior. x and the result are in measure units.
// Items of equal difficulty are grouped (right·log P + wrong·log(1 − P)) so that long tests of
// few distinct difficulties stay cheap.
type refModel struct {
	lambda, s float64
	groups    []refGroup
	prior     Normal
}

type refGroup struct {
	d            float64
	right, wrong float64
}

func newRefModel(f *Framework, t Test, prior Normal) *refModel {
	m := &refModel{lambda: math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch)), s: f.UnitsPerLogit, prior: prior}
	index := map[float64]int{}
	right := t.Correct
	for _, d := range t.Items {
		j, ok := index[d.Measure]
		if !ok {
			j = len(m.groups)
			index[d.Measure] = j
			m.groups = append(m.groups, refGroup{d: d.Measure})
		}
		r := min(right, d.Count)
		right -= r
		m.groups[j].right += float64(r)
		m.groups[j].wrong += float64(d.Count - r)
	}
	return m
}

func (m *refModel) logPost(x float64) float64 {
	ll := 0.0
	for _, g := range m.groups {
		z := (x-g.d)/m.s + m.lambda
		if g.right > 0 {
			ll += g.right * -math.Log1p(math.Exp(-z)) // log P
		}
		if g.wrong > 0 {
			ll += g.wrong * -math.Log1p(math.Exp(z)) // log(1 − P)
		}
	}
	u := (x - m.prior.Mean) / m.prior.SD
	return ll - 0.5*u*u
}

// refPosterior integrates the posterior by the trapezoid rule on dense grids, in measure units.
// A first pass of points intervals over prior.Mean ± (30·prior.SD + 30·s) finds the grid points
// where the log-posterior is within 60 of the largest value on the grid; since the log-posterior
// is concave, that run of points widened by one step on each side holds everything within e^−60
// of the true maximum. Two more passes of points intervals integrate over such a window (each
// found from the previous pass); the last gives the answer.
func refPosterior(f *Framework, t Test, prior Normal, points int) Normal {
	m := newRefModel(f, t, prior)
	width := 30*prior.SD + 30*f.UnitsPerLogit
	lo, hi := prior.Mean-width, prior.Mean+width
	vals := make([]float64, points+1)
	var out Normal
	for pass := 0; pass < 3; pass++ {
		h := (hi - lo) / float64(points)
		top := math.Inf(-1)
		for i := range vals {
			vals[i] = m.logPost(lo + float64(i)*h)
			top = math.Max(top, vals[i])
		}
		centre := lo + (hi-lo)/2
		var m0, m1, m2 float64
		first, last := -1, 0
		for i, v := range vals {
			if v > top-60 {
				if first < 0 {
					first = i
				}
				last = i
			}
			w := 1.0
			if i == 0 || i == points {
				w = 0.5
			}
			p := w * math.Exp(v-top)
			dx := float64(i)*h - (centre - lo)
			m0 += p
			m1 += p * dx
			m2 += p * dx * dx
		}
		mean := m1 / m0
		out = Normal{Mean: centre + mean, SD: math.Sqrt(m2/m0 - mean*mean)}
		lo, hi = lo+float64(first-1)*h, lo+float64(last+1)*h
	}
	return out
}
