package measure

import (
	"errors"
	"math"
)

// The descent of quantReg for one τ (growthnorms_qr.go explains the method). Along a step only
// the residuals move (by t·u_i) and only the observations whose residual changed side change the
// gradient, so a step costs one pass over the design for u and one over the residuals.

var errUnbounded = errors.New("the check loss is unbounded along an edge (non-finite data?)")

// solve descends from the current vertex to an optimal one for tau.
func (q *quantReg) solve(tau float64) error {
	if err := q.refresh(); err != nil {
		return err
	}
	q.gradient(tau)
	for step := 0; step < maxSteps; step++ {
		q.edges()
		j, sigma, d := q.steepest(tau)
		if j < 0 {
			return nil
		}
		enter, t, err := q.lineSearch(j, sigma, d)
		if err != nil {
			return err
		}
		leave := q.basis[j]
		q.inBasis[leave] = false
		q.basis[j] = enter
		q.inBasis[enter] = true
		if err := q.factor(); err != nil {
			return err
		}
		q.move(tau, t, leave, enter, sigma)
	}
	return errors.New("no optimum within the step limit")
}

// sideOf classifies a residual: above the fit, below it, or on it.
func (q *quantReg) sideOf(r float64) int8 {
	switch {
	case r > q.eps:
		return 1
	case r < -q.eps:
		return -1
	}
	return 0
}

// psi is ψ_τ of a side: τ above the fit, τ − 1 below, 0 on it (or in the basis).
func psi(side int8, tau float64) float64 {
	switch side {
	case 1:
		return tau
	case -1:
		return tau - 1
	}
	return 0
}

// gradient classifies every residual and sums g = Σ ψ_τ(r_i)·x_i from scratch.
func (q *quantReg) gradient(tau float64) {
	clear(q.g)
	for i := 0; i < q.n; i++ {
		if q.inBasis[i] {
			q.side[i] = 2
			continue
		}
		q.side[i] = q.sideOf(q.r[i])
		if ps := psi(q.side[i], tau); ps != 0 {
			xi := q.row(i)
			for a := range q.g {
				q.g[a] += ps * xi[a]
			}
		}
	}
}

// move goes t along the edge just taken: the residuals move by t·u_i, the leaving observation
// is off the fit by t on the edge's side, the entering one is on it, and g follows every
// observation that changed side; it lists those left on the fit.
func (q *quantReg) move(tau, t float64, leave, enter int, sigma float64) {
	q.u[leave] = sigma // its residual goes to −σt
	q.side[leave] = 0
	for i := 0; i < q.n; i++ {
		old := q.side[i]
		if old == 2 {
			continue
		}
		var nw int8 = 2
		if i != enter {
			q.r[i] -= t * q.u[i]
			nw = q.sideOf(q.r[i])
		} else {
			q.r[i] = 0
		}
		if nw == old {
			continue
		}
		q.side[i] = nw
		if d := psi(nw, tau) - psi(old, tau); d != 0 {
			xi := q.row(i)
			for a := range q.g {
				q.g[a] += d * xi[a]
			}
		}
	}
}

// edges computes a_j = gᵀ(B⁻¹ column j) and lists the non-basic observations on the fit with
// x_iᵀB⁻¹, how each edge moves them.
func (q *quantReg) edges() {
	p := q.p
	for j := 0; j < p; j++ {
		s := 0.0
		for a := 0; a < p; a++ {
			s += q.g[a] * q.binv[a*p+j]
		}
		q.a[j] = s
	}
	q.zero = q.zero[:0]
	for i, sd := range q.side {
		if sd == 0 {
			q.zero = append(q.zero, i)
		}
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
// on it and returns the observation whose residual reaches zero there and the step t. Along the
// edge the residual of a non-basic observation i is r_i − t·u_i (u_i kept for move); crossing
// zero at t_i = r_i/u_i > 0 it adds |u_i| to the slope, so the minimum is the first t_i at which
// the slope reaches zero.
func (q *quantReg) lineSearch(j int, sigma, d float64) (int, float64, error) {
	p := q.p
	col := q.work[:p]
	for a := 0; a < p; a++ {
		col[a] = sigma * q.binv[a*p+j]
	}
	q.cand = q.cand[:0]
	for i := 0; i < q.n; i++ {
		sd := q.side[i]
		if sd == 2 {
			continue
		}
		u := dot4(q.row(i), col)
		q.u[i] = u
		if (sd == 1 && u > 0) || (sd == -1 && u < 0) {
			q.cand = append(q.cand, breakpoint{t: q.r[i] / u, w: math.Abs(u), i: i})
		}
	}
	k, ok := weightedSelect(q.cand, -d)
	if !ok {
		return 0, 0, errUnbounded
	}
	return q.cand[k].i, q.cand[k].t, nil
}

// weightedSelect returns the index in c of the breakpoint with the smallest t at which the
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
			return lt, true
		}
		need -= we
		lo = gt
	}
	return 0, false
}

// dot4 is dot with four running sums, which the compiler keeps in registers and the processor
// adds in parallel: the direction's pass is most of a fit's time.
func dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}
