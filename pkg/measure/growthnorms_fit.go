package measure

import (
	"fmt"
	"slices"
)

// GrowthFit is a fitted growth model with the check loss of each of its τ.
type GrowthFit struct {
	Model *GrowthModel
	N     int       // students in the cohort
	Loss  []float64 // the check loss of τ_1 … τ_100 at the fitted coefficients
}

// FitGrowth fits the quantile regressions of a growth model (§15) on a cohort: priors[k][i] is
// student i's measure in prior window k (older first), current[i] their current measure. The
// model's Framework, Current and Priors are left for the caller. progress, when not nil, is
// called after each τ.
func FitGrowth(priors [][]float64, current []float64, progress func()) (*GrowthFit, error) {
	n := len(current)
	if len(priors) < 1 || len(priors) > 2 {
		return nil, fmt.Errorf("%d priors; want 1 or 2", len(priors))
	}
	for k, p := range priors {
		if len(p) != n {
			return nil, fmt.Errorf("prior %d has %d measures for %d current ones", k+1, len(p), n)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("empty cohort")
	}
	m := &GrowthModel{Lowest: slices.Min(current), Highest: slices.Max(current)}
	for k, p := range priors {
		s := SplineFor(p)
		if !(s.Boundaries[0] < s.Boundaries[1]) {
			return nil, fmt.Errorf("prior %d: every measure is %v; a spline needs a spread", k+1, p[0])
		}
		m.Splines = append(m.Splines, s)
	}
	cols := m.columns()
	x := make([]float64, n*cols)
	pr := make([]float64, len(priors))
	for i := 0; i < n; i++ {
		for k := range priors {
			pr[k] = priors[k][i]
		}
		m.design(pr, x[i*cols:(i+1)*cols])
	}
	taus := make([]float64, GrowthQuantiles)
	for k := range taus {
		taus[k] = growthTau(k + 1)
	}
	coef, loss, err := newQuantReg(x, current, cols).fitTaus(taus, progress)
	if err != nil {
		return nil, err
	}
	m.Coefficients = coef
	return &GrowthFit{Model: m, N: n, Loss: loss}, nil
}
