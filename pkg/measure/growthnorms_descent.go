package measure

import (
	"errors"
	"math"
)

// The descent of quantReg for one τ (growthnorms_qr.go explains the method).

var errUnbounded = errors.New("the check loss is unbounded along an edge (non-finite data?)")

// solve descends from the current vertex to an optimal one for tau.
func (q *quantReg) solve(tau float64) error {
	for step := 0; step < maxSteps; step++ {
		q.gradient(tau)
		j, sigma, d := q.steepest(tau)
		if j < 0 {
			return nil
		}
		enter, err := q.lineSearch(j, sigma, d)
		if err != nil {
			return err
		}
		q.inBasis[q.basis[j]] = false
		q.basis[j] = enter
		q.inBasis[enter] = true
		if err := q.refresh(); err != nil {
			return err
		}
	}
	return errors.New("no optimum within the step limit")
}

// gradient sums g = Σ ψ_τ(r_i)·x_i over the non-basic observations off the fit, lists those on
// it (with x_iᵀB⁻¹, how each edge moves them), and a_j = gᵀ(B⁻¹ column j).
func (q *quantReg) gradient(tau float64) {
	p := q.p
	clear(q.g)
	q.zero = q.zero[:0]
	for i := 0; i < q.n; i++ {
		if q.inBasis[i] {
			continue
		}
		r := q.r[i]
		var psi float64
		switch {
		case r > q.eps:
			psi = tau
		case r < -q.eps:
			psi = tau - 1
		default:
			q.zero = append(q.zero, i)
			continue
		}
		xi := q.row(i)
		for a := range q.g {
			q.g[a] += psi * xi[a]
		}
	}
	for j := 0; j < p; j++ {
		s := 0.0
		for a := 0; a < p; a++ {
			s += q.g[a] * q.binv[a*p+j]
		}
		q.a[j] = s
	}
	if need := len(q.zero) * p; cap(q.zw) < need {
		q.zw = make([]float64, need)
	} else {
		q.zw = q.zw[:need]
	}
	for k, i := range q.zero {
		xi := q.row(i)
		w := q.zw[k*p : (k+1)*p]
		for j := 0; j < p; j++ {
			s := 0.0
			for a := 0; a < p; a++ {
				s += xi[a] * q.binv[a*p+j]
			}
			w[j] = s
		}
	}
}

// steepest returns the edge (basis position j, direction σ = ±1) with the most negative
// directional derivative d of the loss, or j = −1 at an optimum. Along σ·(B⁻¹ column j) the
// basis observation j leaves its fit downwards (σ = 1) or upwards, each observation on the fit
// leaves it by σ·x_iᵀB⁻¹_j, and the others change the loss at the rate −σ·a_j.
func (q *quantReg) steepest(tau float64) (j int, sigma, d float64) {
	p := q.p
	j, d = -1, 0
	for c := 0; c < p; c++ {
		up, down, size := 0.0, 0.0, 0.0 // over the zero residuals, for σ = +1 and −1
		for k := range q.zero {
			w := q.zw[k*p+c]
			if w > 0 {
				up += (1 - tau) * w
				down += tau * w
			} else {
				up -= tau * w
				down -= (1 - tau) * w
			}
			size += math.Abs(w)
		}
		tol := derivativeTol * (1 + math.Abs(q.a[c]) + size)
		if dp := -q.a[c] + (1 - tau) + up; dp < -tol && dp < d {
			j, sigma, d = c, 1, dp
		}
		if dm := q.a[c] + tau + down; dm < -tol && dm < d {
			j, sigma, d = c, -1, dm
		}
	}
	return j, sigma, d
}

// lineSearch goes along edge (j, σ), whose derivative d is negative, to the minimum of the loss
// on it and returns the observation whose residual reaches zero there. Along the edge the
// residual of a non-basic observation i is r_i − t·u_i; crossing zero at t_i = r_i/u_i > 0 it
// adds |u_i| to the slope, so the minimum is the first t_i at which the slope reaches zero.
func (q *quantReg) lineSearch(j int, sigma, d float64) (int, error) {
	p := q.p
	q.cand = q.cand[:0]
	for i := 0; i < q.n; i++ {
		r := q.r[i]
		if q.inBasis[i] || math.Abs(r) <= q.eps {
			continue
		}
		xi := q.row(i)
		s := 0.0
		for a := 0; a < p; a++ {
			s += xi[a] * q.binv[a*p+j]
		}
		u := sigma * s
		if (r > 0 && u > 0) || (r < 0 && u < 0) {
			q.cand = append(q.cand, breakpoint{t: r / u, w: math.Abs(u), i: i})
		}
	}
	i, ok := weightedSelect(q.cand, -d)
	if !ok {
		return 0, errUnbounded
	}
	return i, nil
}

// weightedSelect returns the observation of the breakpoint with the smallest t at which the
// weights of the breakpoints up to it (in order of t) reach need, reordering c; ok is false when
// all of them fall short. Quickselect: linear time on average.
func weightedSelect(c []breakpoint, need float64) (int, bool) {
	lo, hi := 0, len(c)
	seed := uint64(len(c))*0x9E3779B97F4A7C15 + 1
	for lo < hi {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		pv := c[lo+int(seed%uint64(hi-lo))].t
		// Three-way partition of [lo, hi): < pv, == pv, > pv.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch t := c[i].t; {
			case t < pv:
				c[lt], c[i] = c[i], c[lt]
				lt++
				i++
			case t > pv:
				gt--
				c[gt], c[i] = c[i], c[gt]
			default:
				i++
			}
		}
		wl := 0.0
		for k := lo; k < lt; k++ {
			wl += c[k].w
		}
		if wl >= need {
			hi = lt
			continue
		}
		need -= wl
		we := 0.0
		for k := lt; k < gt; k++ {
			we += c[k].w
		}
		if we >= need {
			return c[lt].i, true
		}
		need -= we
		lo = gt
	}
	return 0, false
}
