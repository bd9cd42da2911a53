package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// The Hessian wanted of derivatives: none, the exact one, or every stride-th booklet's share
// (stride > 1) scaled up by the persons, a cheap start for the quasi-Newton steps.
const (
	hessNone  = 0
	hessExact = 1
)

// thresholdDerivatives returns the objective, its gradient and its Hessian (P × P) as stride
// says (nil for hessNone) in the thresholds at delta.
func (e *pestimation) thresholdDerivatives(ctx context.Context, delta []float64, stride int) (float64, []float64, []float64, error) {
	return e.thresholdPass(ctx, delta, stride, true)
}

// thresholdPass is thresholdDerivatives; with all false it visits only the booklets of the
// Hessian's sample and returns the Hessian alone (when the gradient at delta is known already).
//
// A sampled Hessian (stride > 1) takes its same-item blocks exactly, from every booklet: they
// need only the first-order probabilities, which every pass over all booklets computes anyway
// (so each such pass keeps them, with the thresholds they belong to, for a sample-only pass at
// the same point), and they are the bulk of the information; only the joint terms of different
// items come from the sample, scaled up. That halves the rate at which the quasi-Newton steps
// shrink (10 iterations instead of 12 on the 20%-blank benchmark).
func (e *pestimation) thresholdPass(ctx context.Context, delta []float64, stride int, all bool) (float64, []float64, []float64, error) {
	size := len(delta)
	if !all && stride > 1 && !slices.Equal(e.blocksAt, delta) {
		all = true
	}
	if all {
		n := len(e.kept)
		e.boff = resize(e.boff, n+1)
		for k := range n {
			e.boff[k+1] = e.boff[k] + e.top[k]*e.top[k]
		}
		e.blocks = resize(e.blocks, e.boff[n])
		clear(e.blocks)
		e.blocksAt = e.blocksAt[:0] // set once the pass is complete
		e.work.blocks, e.work.boff = e.blocks, e.boff
		defer func() { e.work.blocks = nil }()
	}
	exp := make([]float64, size)
	var info []float64
	hessian := stride != hessNone
	if hessian {
		info = make([]float64, size*size)
	}
	sampled := 0.0
	f := 0.0
	for h, s := range e.atLeast {
		f += s * delta[h]
	}
	e.work.steps.prepare(delta, e.top, e.off)
	defer e.work.steps.done()
	for b := range e.booklets {
		if b%256 == 255 {
			if err := ctx.Err(); err != nil {
				return 0, nil, nil, err
			}
		}
		bi := info
		if hessian && b%stride != 0 {
			if !all {
				continue
			}
			bi = nil
		} else if hessian {
			for _, n := range e.booklets[b].n {
				sampled += n
			}
		}
		ll, err := e.work.accumulate(&e.booklets[b], delta, e.top, e.off, exp, bi, size)
		if err != nil {
			return 0, nil, nil, err
		}
		f += ll
	}
	if all {
		for k := range e.kept {
			mirrorUpper(e.blocks[e.boff[k]:e.boff[k+1]], e.top[k])
		}
		e.blocksAt = append(e.blocksAt, delta...)
	}
	if hessian {
		mirrorUpper(info, size)
	}
	if stride > 1 {
		scale := float64(e.persons) / sampled
		for h := range info {
			info[h] *= scale
		}
		for k := range e.kept {
			m := e.top[k]
			for h := range m {
				a := e.off[k] + h
				copy(info[a*size+e.off[k]:a*size+e.off[k+1]], e.blocks[e.boff[k]+h*m:e.boff[k]+(h+1)*m])
			}
		}
	}
	// From category indicators 1[x = h] to cumulative ones 1[x ≥ k] = Σ_{h≥k} 1[x = h]: suffix
	// sums within each item, over the expected counts and over both sides of the information.
	for k := range e.kept {
		for h := e.off[k+1] - 2; h >= e.off[k]; h-- {
			exp[h] += exp[h+1]
		}
	}
	grad := make([]float64, size)
	for h := range grad {
		grad[h] = e.atLeast[h] - exp[h]
	}
	if !hessian {
		return f, grad, nil, nil
	}
	for r := range size {
		row := info[r*size : (r+1)*size]
		for k := range e.kept {
			for h := e.off[k+1] - 2; h >= e.off[k]; h-- {
				row[h] += row[h+1]
			}
		}
	}
	for k := range e.kept {
		for h := e.off[k+1] - 2; h >= e.off[k]; h-- {
			a, b := info[h*size:(h+1)*size], info[(h+1)*size:(h+2)*size]
			for c := range a {
				a[c] += b[c]
			}
		}
	}
	return f, grad, info, nil
}

// derivatives returns the objective, gradient and Hessian (as stride says) in the parameters η.
func (e *pestimation) derivatives(ctx context.Context, eta []float64, stride int) (float64, []float64, []float64, error) {
	return e.pass(ctx, eta, stride, true)
}

// information returns the Hessian in η as stride says (not hessNone), visiting only the
// booklets it needs.
func (e *pestimation) information(ctx context.Context, eta []float64, stride int) ([]float64, error) {
	_, _, info, err := e.pass(ctx, eta, stride, false)
	return info, err
}

// pass is derivatives, or information with all false (its objective and gradient then partial).
func (e *pestimation) pass(ctx context.Context, eta []float64, stride int, all bool) (float64, []float64, []float64, error) {
	hessian := stride != hessNone
	f, grad, info, err := e.thresholdPass(ctx, e.delta(eta), stride, all)
	if err != nil || !e.rsm {
		return f, grad, info, err
	}
	w := e.designMatrix()
	p, q := len(grad), len(eta)
	wd := mat.NewDense(p, q, w)
	var g mat.VecDense
	g.MulVec(wd.T(), mat.NewVecDense(p, grad))
	if !hessian {
		return f, g.RawVector().Data, nil, nil
	}
	var hw, h mat.Dense
	hw.Mul(mat.NewDense(p, p, info), wd)
	h.Mul(wd.T(), &hw)
	return f, g.RawVector().Data, h.RawMatrix().Data, nil
}

// newton minimises the objective as estimation.newton does, with the null vector v of the
// information in η: (I + a·vvᵀ)Δ = −g gives the Newton step within v⊥, since the gradient is
// orthogonal to v (a common shift of every threshold changes no person's conditional
// probabilities); the identification then centres the locations.
//
// The information's joint terms are nearly all of an iteration's work when there are many
// booklets (one per person when cells are blank at random), so it is computed only at the start
// and again if a step needs halving or shrinks by less than refreshRatio, from a sample of the
// booklets when there are many (sampleStride); between, it is carried by BFGS updates from the
// exact gradients (quasi-Newton). The gradient is exact, so the optimum is the same; only the
// path to it changes. The line search's trial point is evaluated with its gradient in one pass
// (the ESFs serve both), which the next step then starts from.
func (e *pestimation) newton(ctx context.Context, progress func(CalibrateProgress)) (int, error) {
	const refreshRatio = 0.5
	q := len(e.eta)
	v := e.null()
	trial := make([]float64, q)
	var ch mat.Cholesky
	stride := e.sampleStride()
	if e.exactNewton {
		stride = hessExact
	}
	f, grad, hess, err := e.derivatives(ctx, e.eta, stride)
	if err != nil {
		return 0, err
	}
	last := math.Inf(1)
	for iter := 1; iter <= calibrateMaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := factorAlong(&ch, hess, v); err != nil {
			return 0, err
		}
		step, err := newtonStep(&ch, grad)
		if err != nil {
			return 0, err
		}
		ft, gt, halved, err := e.lineSearch(ctx, f, step, trial)
		if err != nil {
			return 0, err
		}
		change := maxAbs(step)
		copy(e.eta, trial) // centred by lineSearch
		if progress != nil {
			progress(CalibrateProgress{Iteration: iter, MaxChange: change})
		}
		if change < calibrateTolerance {
			return iter, nil
		}
		switch {
		case gt == nil: // halved: the gradient at the point taken is not known yet
			ft, gt, hess, err = e.derivatives(ctx, e.eta, stride)
		case e.exactNewton || halved || change > refreshRatio*last:
			hess, err = e.information(ctx, e.eta, stride)
		default:
			bfgsUpdate(hess, step, grad, gt)
		}
		if err != nil {
			return 0, err
		}
		f, grad, last = ft, gt, change
	}
	return 0, fmt.Errorf("calibrate: no convergence in %d Newton iterations", calibrateMaxIter)
}

// maxAbs is the largest |x_k|.
func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// sampleStride is the stride of the Hessians that start (or restart) the quasi-Newton steps:
// with hundreds of booklets (persons with blanks at random) the joint terms of different items
// from a sample of at least 128 of them, scaled up, serve nearly as well as all of them (each
// item's own block is exact, thresholdPass; the gradients are exact, so the optimum is the same:
// 10–11 iterations from 5% to 50% blank on the benchmark's data, as with 256); the exact
// information is computed once, at the optimum, for the standard errors.
func (e *pestimation) sampleStride() int {
	const sample = 128 // booklets at least in the sample
	return max(hessExact, len(e.booklets)/sample)
}

// bfgsUpdate carries the Hessian h (q × q, row-major) across the step s, over which the gradient
// went from g0 to g1: h ← h − (hs)(hs)ᵀ/(sᵀhs) + yyᵀ/(yᵀs), y = g1 − g0. It is left as it is
// where the curvature is not positive (rounding: the objective is convex).
func bfgsUpdate(h, s, g0, g1 []float64) {
	q := len(s)
	hs := make([]float64, q)
	y := make([]float64, q)
	shs, ys := 0.0, 0.0
	for i := range q {
		for j := range q {
			hs[i] += h[i*q+j] * s[j]
		}
		y[i] = g1[i] - g0[i]
		shs += s[i] * hs[i]
		ys += y[i] * s[i]
	}
	if !(shs > 0 && ys > 0) {
		return
	}
	for i := range q {
		for j := range q {
			h[i*q+j] += y[i]*y[j]/ys - hs[i]*hs[j]/shs
		}
	}
}

// newtonStep solves for the step −H⁻¹g with the factor ch.
func newtonStep(ch *mat.Cholesky, grad []float64) ([]float64, error) {
	q := len(grad)
	x := mat.NewVecDense(q, nil)
	if err := ch.SolveVecTo(x, mat.NewVecDense(q, slices.Clone(grad))); err != nil {
		return nil, fmt.Errorf("calibrate: solve for the Newton step: %w", err)
	}
	step := x.RawVector().Data
	for k := range step {
		step[k] = -step[k]
	}
	return step, nil
}

// lineSearch halves step (in place) until the objective at eta + step does not rise; trial is
// left at the accepted point, centred (the identification: a common shift changes neither the
// objective nor its gradient, and a pass over every booklet at the centred point leaves its
// same-item blocks for the next sampled information there). It returns the objective there and its gradient when the full step
// was taken and is not small enough to end the iterations (the next iteration starts from them;
// nil otherwise: one pass that computes both costs little more than the objective alone, but a
// halved step's rejected trials need only the objective), and whether the step was halved.
func (e *pestimation) lineSearch(ctx context.Context, f float64, step, trial []float64) (float64, []float64, bool, error) {
	for t := 0; ; t++ {
		for k := range trial {
			trial[k] = e.eta[k] + step[k]
		}
		e.centreEta(trial)
		var ft float64
		var gt []float64
		var err error
		if t == 0 && maxAbs(step) >= calibrateTolerance {
			ft, gt, _, err = e.derivatives(ctx, trial, hessNone)
		} else {
			ft, err = e.objective(trial)
		}
		if ctx.Err() != nil {
			return 0, nil, false, ctx.Err()
		}
		if err == nil && ft <= f+1e-12*math.Abs(f) {
			return ft, gt, t > 0, nil
		}
		if t == 40 {
			return 0, nil, false, errors.New("calibrate: Newton step failed to lower the objective")
		}
		for k := range step {
			step[k] /= 2
		}
	}
}
