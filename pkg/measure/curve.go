package measure

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/interp"
)

// normCurve is the norm curve N(t) of §4: median measure against time in years (t = grade + 0.5
// at mid-year), a monotone piecewise cubic (PCHIP, Fritsch–Butland derivatives from gonum) through
// the grade medians, continued beyond both ends along the straight line of the end segment (the
// secant through the last two knots at each end, §4).
//
// gonum fits the derivatives once; evaluation and inversion run on our own coefficient table so
// that a group forecast costs a binary search over 13 knots and a few multiplications per
// student, with no allocation (gonum's Predict reads a mat.Dense per call).
type normCurve struct {
	t, y    []float64    // knots
	coef    [][4]float64 // per segment: y + a1·dt + a2·dt² + a3·dt³, dt = t - t[i]
	loSlope float64      // slope of the straight continuation below t[0]
	hiSlope float64      // and above t[last]
}

// fit builds the curve from medians at grades 0..len-1. The medians must be finite and strictly
// increasing: the curve must be invertible (§4, t0 = N⁻¹(a)).
func (c *normCurve) fit(medians []float64) error {
	n := len(medians)
	if n < 3 {
		return fmt.Errorf("%d medians; want at least 3", n)
	}
	t := make([]float64, n)
	y := make([]float64, n)
	for g, v := range medians {
		if !finite(v) {
			return fmt.Errorf("grade %d median %v is not finite", g, v)
		}
		if g > 0 && v <= medians[g-1] {
			return fmt.Errorf("grade %d median %v is not above grade %d median %v", g, v, g-1, medians[g-1])
		}
		t[g] = float64(g) + 0.5
		y[g] = v
	}
	var fb interp.FritschButland
	if err := fb.Fit(t, y); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	d := make([]float64, n)
	for i := range t {
		d[i] = fb.PredictDerivative(t[i])
	}
	coef := make([][4]float64, n-1)
	for i := 0; i < n-1; i++ {
		h := t[i+1] - t[i]
		dy := y[i+1] - y[i]
		coef[i] = [4]float64{
			y[i],
			d[i],
			(3*dy - (2*d[i]+d[i+1])*h) / (h * h),
			(-2*dy + (d[i]+d[i+1])*h) / (h * h * h),
		}
	}
	// Beyond the ends the curve follows the end segment's secant, not PCHIP's end derivative:
	// the end derivative reflects how the curve bends inside its last year (1.5 units a year at
	// the demo math scale's top, whose last segment rises 35), so extending it made a student just
	// below the top median outgrow one just above it. The secant is positive because the medians increase,
	// so the continuation is always invertible, and at() and inverse() use the same line.
	c.loSlope = (y[1] - y[0]) / (t[1] - t[0])
	c.hiSlope = (y[n-1] - y[n-2]) / (t[n-1] - t[n-2])
	c.t, c.y, c.coef = t, y, coef
	return nil
}

// at returns N(t).
func (c *normCurve) at(t float64) float64 {
	last := len(c.t) - 1
	switch {
	case t <= c.t[0]:
		return c.y[0] + c.loSlope*(t-c.t[0])
	case t >= c.t[last]:
		return c.y[last] + c.hiSlope*(t-c.t[last])
	}
	i := segment(c.t, t) // c.t[i] < t <= c.t[i+1]
	dt := t - c.t[i]
	a := &c.coef[i]
	return a[0] + dt*(a[1]+dt*(a[2]+dt*a[3]))
}

// inverse returns t with N(t) = v: exact on the straight ends, bracketed Newton on the cubic
// segment that holds v (monotone by construction, so the root is unique).
func (c *normCurve) inverse(v float64) float64 {
	last := len(c.y) - 1
	switch {
	case v <= c.y[0]:
		return c.t[0] + (v-c.y[0])/c.loSlope
	case v >= c.y[last]:
		return c.t[last] + (v-c.y[last])/c.hiSlope
	}
	i := segment(c.y, v) // c.y[i] < v <= c.y[i+1]
	a := &c.coef[i]
	h := c.t[i+1] - c.t[i]
	lo, hi := 0.0, h
	dt := h * (v - c.y[i]) / (c.y[i+1] - c.y[i]) // secant start
	for iter := 0; iter < 60; iter++ {
		r := a[0] + dt*(a[1]+dt*(a[2]+dt*a[3])) - v
		if r < 0 {
			lo = dt
		} else {
			hi = dt
		}
		slope := a[1] + dt*(2*a[2]+dt*3*a[3])
		next := dt - r/slope
		if !(next > lo && next < hi) { // also catches slope == 0
			next = 0.5 * (lo + hi)
		}
		if math.Abs(next-dt) < 1e-12 {
			dt = next
			break
		}
		dt = next
	}
	return c.t[i] + dt
}

// segment returns i with xs[i] < v <= xs[i+1], for xs[0] < v <= xs[last] (a plain binary search:
// sort.Search's closure costs more than the search on 13 knots).
func segment(xs []float64, v float64) int {
	lo, hi := 0, len(xs)-1
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if xs[mid] < v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
