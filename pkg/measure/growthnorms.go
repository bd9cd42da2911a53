package measure

import (
	"fmt"
	"math"
	"slices"
)

// Growth norms (§15): for a framework, a current window and one or two prior windows, the
// coefficients of 100 linear quantile regressions of the current measure on the B-spline bases of
// the priors. They answer a student growth percentile (SGP): where the student's current measure
// falls among those of students who started where they did.

// GrowthQuantiles is the number of quantile regressions of a model: τ_k = (k − 0.5)/100.
const GrowthQuantiles = 100

// minGrowthCohort is the default smallest cohort a growth model is fitted from.
const minGrowthCohort = 300

// growthTau is τ_k for k = 1 … GrowthQuantiles.
func growthTau(k int) float64 { return (float64(k) - 0.5) / GrowthQuantiles }

// Window is a measurement occasion: a grade (0 … 12) and a time of year (BOY, MOY, EOY).
type Window struct {
	Grade      int
	TimeOfYear string
}

// String is "grade 5 EOY".
func (w Window) String() string { return fmt.Sprintf("grade %d %s", w.Grade, w.TimeOfYear) }

// Before orders windows in time: by grade, then BOY < MOY < EOY.
func (w Window) Before(v Window) bool {
	if w.Grade != v.Grade {
		return w.Grade < v.Grade
	}
	return slices.Index(timesOfYear, w.TimeOfYear) < slices.Index(timesOfYear, v.TimeOfYear)
}

// GrowthModel is one model of the growth norms. Treat it as read-only.
type GrowthModel struct {
	Framework       string
	Current         Window
	Priors          []Window // one or two, older first
	Splines         []Spline // the basis of each prior, in the order of Priors
	Lowest, Highest float64  // the cohort's lowest and highest current measure
	// Coefficients holds, for τ_1 … τ_100, the 1 + 7·len(Priors) coefficients in the design's
	// column order: intercept, then each prior's basis, older first.
	Coefficients [][]float64
}

// Order is the number of priors, 1 or 2.
func (m *GrowthModel) Order() int { return len(m.Priors) }

// columns is the width of the model's design.
func (m *GrowthModel) columns() int { return 1 + SplineColumns*len(m.Splines) }

// design writes the design row for the prior measures (older first) into dst.
func (m *GrowthModel) design(priors []float64, dst []float64) {
	dst[0] = 1
	for k, s := range m.Splines {
		s.Basis(priors[k], dst[1+k*SplineColumns:])
	}
}

// Quantiles are the student's 100 conditional quantiles of the current measure given the prior
// measures (older first; each clamped into its spline's boundaries): x'β_k, sorted increasing,
// rounded to 5 decimals and clamped into [Lowest, Highest].
func (m *GrowthModel) Quantiles(priors []float64) [GrowthQuantiles]float64 {
	x := make([]float64, m.columns())
	m.design(priors, x)
	var q [GrowthQuantiles]float64
	for k, beta := range m.Coefficients {
		q[k] = dot(x, beta)
	}
	slices.Sort(q[:])
	for k, v := range q {
		q[k] = min(max(math.Round(v*1e5)/1e5, m.Lowest), m.Highest)
	}
	return q
}

// SGP is the growth percentile of a current measure given the student's quantiles: the number
// of quantiles strictly below it, 0 reported as 1 and 100 as 99.
func SGP(q *[GrowthQuantiles]float64, current float64) int {
	n := 0
	for _, v := range q {
		if v < current {
			n++
		}
	}
	return min(max(n, 1), 99)
}

// Cut is the measure a current measure must exceed for the growth to reach percentile p
// (1 … 99): the p-th quantile.
func Cut(q *[GrowthQuantiles]float64, p int) float64 { return q[p-1] }
