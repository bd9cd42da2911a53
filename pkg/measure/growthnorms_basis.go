package measure

import (
	"math"
	"slices"
)

// Growth norms (§15) describe each prior measure by the cubic B-spline basis of R's splines::bs
// without intercept, on four interior knots and two boundaries; this file is that basis and the
// rule that places the knots and boundaries, kept bit-for-bit close to R so that norms fitted
// here and in R give the same percentiles.

// SplineKnots is the number of interior knots of a prior's basis.
const SplineKnots = 4

// SplineColumns is the number of basis columns per prior: a cubic with four interior knots has
// eight B-splines, and the first is dropped (no intercept; the design has its own).
const SplineColumns = SplineKnots + 3

// knotProbs are the probabilities of the sample quantiles that place the interior knots.
var knotProbs = [SplineKnots]float64{0.2, 0.4, 0.6, 0.8}

// boundaryExtension widens the prior's range on each side by this share of it (R's extendrange).
const boundaryExtension = 0.1

// Spline is the basis of one prior: its interior knots and its boundaries.
type Spline struct {
	Knots      [SplineKnots]float64
	Boundaries [2]float64
}

// SplineFor places the knots and boundaries for a cohort's prior measures: the knots at the
// type-7 sample quantiles 0.2 … 0.8 and the boundaries 10% of the range beyond the smallest and
// largest measure, each rounded to 3 decimals. It needs at least one value.
func SplineFor(values []float64) Spline {
	x := slices.Clone(values)
	slices.Sort(x)
	var s Spline
	for k, p := range knotProbs {
		s.Knots[k] = round3(quantile7(x, p))
	}
	lo, hi := x[0], x[len(x)-1]
	d := hi - lo
	s.Boundaries = [2]float64{round3(lo - boundaryExtension*d), round3(hi + boundaryExtension*d)}
	return s
}

// quantile7 is R's default sample quantile (type 7) of sorted values: h = (n−1)p, interpolating
// linearly between the order statistics around h (0-based).
func quantile7(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// round3 rounds to 3 decimals, halves away from zero.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// augmented is the knot sequence of the cubic basis: each boundary four times around the
// interior knots.
func (s Spline) augmented() [SplineKnots + 8]float64 {
	var t [SplineKnots + 8]float64
	for k := 0; k < 4; k++ {
		t[k], t[len(t)-1-k] = s.Boundaries[0], s.Boundaries[1]
	}
	copy(t[4:], s.Knots[:])
	return t
}

// Basis writes the SplineColumns basis values at x into dst (len ≥ SplineColumns), x first
// clamped into the boundaries: bs(x, knots, Boundary.knots) of R without its first column.
// At the upper boundary the basis is its limit from the left, as R's.
func (s Spline) Basis(x float64, dst []float64) {
	t := s.augmented()
	x = min(max(x, t[0]), t[len(t)-1])
	// mu: the knot interval [t[mu], t[mu+1]) that holds x, among the non-empty ones; the last
	// non-empty interval also takes its right end.
	last := len(t) - 5
	for last > 3 && !(t[last] < t[last+1]) {
		last--
	}
	mu := 3
	for j := 3; j <= last; j++ {
		if t[j] < t[j+1] && t[j] <= x {
			mu = j
		}
	}
	// de Boor's triangular recurrence for the four B-splines that do not vanish on the interval;
	// every denominator spans [t[mu], t[mu+1]], so none is zero.
	var n, left, right [4]float64
	n[0] = 1
	for d := 1; d <= 3; d++ {
		left[d] = x - t[mu+1-d]
		right[d] = t[mu+d] - x
		saved := 0.0
		for r := 0; r < d; r++ {
			tmp := n[r] / (right[r+1] + left[d-r])
			n[r] = saved + right[r+1]*tmp
			saved = left[d-r] * tmp
		}
		n[d] = saved
	}
	clear(dst[:SplineColumns])
	for r := 0; r < 4; r++ {
		if col := mu - 3 + r - 1; col >= 0 {
			dst[col] = n[r]
		}
	}
}
