package measure

import (
	"context"
	"math"
)

// The fallback's cost. One evaluation of the log-posterior costs about one unit of work per
// distinct dichotomous difficulty and one per category of each polytomous item (the test's
// size), so the fallback is held to about denseWork units whatever the test: a test of 5,000
// steps gets about 400 evaluations, one of 40 items 50,000, one of a few items all the
// trapezoid's twelve rounds. A quarter of the budget may go to the trapezoid's rounds; what it
// leaves refines panels where the posterior is not yet resolved (posteriorPanels).
const (
	denseWork = 2_000_000
	// denseMaxPoints bounds the evaluations on the smallest tests: four times the trapezoid's
	// twelve rounds (131,073 points), so that those keep every round they had.
	denseMaxPoints = 1 << 19
	// denseMinPoints: however large the test, the fallback may take this many evaluations.
	denseMinPoints = 256
	// cancelEvery: the fallback looks at its context once per this many evaluations (a power of
	// two; at 5,000 steps that is about every 1.3 ms).
	cancelEvery = 16
)

// size is the work of one evaluation of the log-posterior, in items: one a dichotomous block, and
// one a number the polytomous blocks hold (each step's ratio, each block's count, each group's
// header), which an evaluation reads once each.
func (it *items) size() int {
	return max(len(it.k)+len(it.poly), 1)
}

// denseBudget is how many evaluations of the log-posterior the fallback may make on this test.
func (it *items) denseBudget() int {
	return min(denseMaxPoints, max(denseMinPoints, denseWork/it.size()))
}

// dense is one run of the fallback: the log-posterior with its evaluations counted. The caller's
// context is kept apart from it and looked at by the loops (every cancelEvery evaluations): an
// interface call on a field would make the escape analysis move the test's items to the heap.
type dense struct {
	it      *items
	mu, tau float64
	evals   int
	looked  int // evals at the last look at the context
}

func (d *dense) at(x float64) float64 {
	d.evals++
	return d.it.logPost(x, d.mu, d.tau)
}

// gone reports whether ctx is done, looking at it once cancelEvery evaluations have passed since
// the last look.
func (d *dense) gone(ctx context.Context) bool {
	if d.evals-d.looked < cancelEvery {
		return false
	}
	d.looked = d.evals
	return ctx.Err() != nil
}

// edge walks away from the mode, doubling its step, until the log-posterior is denseCut below
// the mode's. Since ℓ is concave it lies below every secant outside the secant's interval, so
// where the secant through the last two points reaches −denseCut ℓ is below −denseCut too;
// that point ends the walk early when it is nearer than the next doubling.
func (d *dense) edge(mode, scale, top, dir float64) float64 {
	u0, v0 := 0.0, 0.0
	u := scale
	for k := 0; k < 60; k++ {
		v := d.at(mode+dir*u) - top
		if v <= -denseCut {
			break
		}
		if slope := (v - v0) / (u - u0); slope < 0 {
			if end := u + (-denseCut-v)/slope; end <= 2*u {
				return mode + dir*end
			}
		}
		u0, v0 = u, v
		u *= 2
	}
	return mode + dir*u
}

// posteriorDense is the fallback for posteriors far from normal: the trapezoid rule over an
// interval holding everything within e^−denseCut of the mode's density, starting with 32 steps
// and halving the step until mean and SD change by less than denseTol logits.
//
// The trapezoid rule converges geometrically for these smooth integrands (the error falls like
// e^(−c/h)), so when halving the step changes the moments by less than denseTol, the error of
// the finer result is far smaller again (about the square of the change, relative to the SD);
// the tests compare it with a 6,000-point reference to 1e-6 logits. Densities are taken relative
// to the largest log-posterior seen so far (the sums are rescaled when a larger one turns up),
// so no term can overflow.
//
// A posterior with a feature far narrower than its width (a polytomous item of thousands of
// steps at ±10,000 gives an edge 1/5,000 logit wide on a posterior 100 logits wide) is not
// resolved by halving a uniform grid within any reasonable number of points; the rounds stop at
// a quarter of denseBudget and posteriorPanels refines the grid where it is needed instead.
func (it *items) posteriorDense(ctx context.Context, mode, scale, top, mu, tau float64) (Normal, error) {
	d := dense{it: it, mu: mu, tau: tau}
	a, b := d.edge(mode, scale, top, -1), d.edge(mode, scale, top, 1)
	budget := it.denseBudget()
	var m0, m1, m2 float64
	add := func(x, v, weight float64) {
		if v > top {
			r := math.Exp(top - v)
			m0, m1, m2, top = m0*r, m1*r, m2*r, v
		}
		h := weight * math.Exp(v-top)
		dx := x - mode
		m0 += h
		m1 += h * dx
		m2 += h * dx * dx
	}
	moments := func() Normal {
		mean := m1 / m0
		return Normal{Mean: mode + mean, SD: math.Sqrt(math.Max(m2/m0-mean*mean, 0))}
	}
	// grid keeps the log-posterior at every point of the current grid, for the panels.
	var small [65]float64
	pts := 32
	grid := small[:pts+1]
	h := (b - a) / float64(pts)
	grid[0], grid[pts] = d.at(a), d.at(b)
	add(a, grid[0], 0.5)
	add(b, grid[pts], 0.5)
	for i := 1; i < pts; i++ {
		x := a + float64(i)*h
		grid[i] = d.at(x)
		add(x, grid[i], 1)
	}
	if d.gone(ctx) {
		return Normal{}, ctx.Err()
	}
	prev := moments()
	for round := 0; round < 12 && 2*pts <= budget/4; round++ {
		grid = interleave(grid, pts)
		for i := 0; i < pts; i++ { // midpoints of the current grid
			x := a + (float64(i)+0.5)*h
			grid[2*i+1] = d.at(x)
			add(x, grid[2*i+1], 1)
			if d.gone(ctx) {
				return Normal{}, ctx.Err()
			}
		}
		pts *= 2
		h /= 2
		cur := moments()
		if math.Abs(cur.Mean-prev.Mean) < denseTol && math.Abs(cur.SD-prev.SD) < denseTol {
			return cur, nil
		}
		prev = cur
	}
	return d.posteriorPanels(ctx, grid, a, h, mode, top, m0*h, prev, budget)
}

// interleave makes room for the midpoints of a grid of pts intervals: the point i moves to 2i.
func interleave(grid []float64, pts int) []float64 {
	n := 2*pts + 1
	if cap(grid) < n {
		g := make([]float64, n, 2*n-1)
		for i, v := range grid {
			g[2*i] = v
		}
		return g
	}
	grid = grid[:n]
	for i := pts; i > 0; i-- {
		grid[2*i] = grid[i]
	}
	return grid
}
