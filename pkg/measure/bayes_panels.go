package measure

import (
	"context"
	"math"
)

// panel is four intervals of the fallback's grid, [a, a + w], with the log-posterior at its five
// points, its moments by Boole's rule (relative to e^top of the run) and the estimated error
// they bring to the posterior's mean and SD, in logits.
type panel struct {
	a, w float64
	v    [5]float64
	s    [3]float64
	err  float64
}

// panels is a run of posteriorPanels: a max-heap of panels by error, with what weighs errors.
type panels struct {
	heap           []panel
	mode, top      float64
	mean, sd, mass float64 // the trapezoid's posterior (mean relative to the mode) and m0
	total          float64 // Σ err
}

// posteriorPanels finishes the fallback when the trapezoid's rounds did not settle within their
// share of the budget: the grid's intervals, four at a time, become panels integrated by
// Simpson's rule on two and on four intervals; their difference estimates each panel's error
// (Richardson: the finer is off by about a fifteenth of it, and Boole's rule, which the panel
// then counts, by less). The panel whose error weighs most on the mean and SD is split in two
// (four new points) until the errors add to less than denseTol logits or the budget is spent.
// A narrow edge is then followed down to its own width in about four points per halving, where
// the uniform grid would need the whole interval at that spacing.
//
// When the budget runs out first, the answer is the panels' sum as it stands: its error is then
// about the errors left (reported by nothing; the tests bound it on the worst tests accepted).
func (d *dense) posteriorPanels(ctx context.Context, grid []float64, a, h, mode, top, mass float64, trap Normal, budget int) (Normal, error) {
	ps := panels{mode: mode, top: top, mean: trap.Mean - mode, sd: trap.SD, mass: mass}
	for _, v := range grid {
		if v > ps.top {
			ps.rebase(v)
		}
	}
	if !(ps.sd > 0 && finite(ps.sd)) || !finite(ps.mean) {
		ps.mean, ps.sd = 0, h*float64(len(grid)-1)
	}
	n := (len(grid) - 1) / 4
	ps.heap = make([]panel, 0, n+max(budget-d.evals, 0)/4+2)
	for j := 0; j < n; j++ {
		var p panel
		p.a, p.w = a+float64(4*j)*h, 4*h
		copy(p.v[:], grid[4*j:4*j+5])
		ps.push(p)
	}
	for ps.unsettled() && d.evals+4 <= budget {
		if d.gone(ctx) {
			return Normal{}, ctx.Err()
		}
		p := ps.pop()
		q := p.w / 8
		l := panel{a: p.a, w: p.w / 2, v: [5]float64{p.v[0], d.at(p.a + q), p.v[1], d.at(p.a + 3*q), p.v[2]}}
		r := panel{a: p.a + p.w/2, w: p.w / 2, v: [5]float64{p.v[2], d.at(p.a + 5*q), p.v[3], d.at(p.a + 7*q), p.v[4]}}
		for _, v := range [...]float64{l.v[1], l.v[3], r.v[1], r.v[3]} {
			if v > ps.top {
				ps.rebase(v)
			}
		}
		ps.push(l)
		ps.push(r)
	}
	var m0, m1, m2 float64
	for i := range ps.heap {
		m0 += ps.heap[i].s[0]
		m1 += ps.heap[i].s[1]
		m2 += ps.heap[i].s[2]
	}
	mean := m1 / m0
	return Normal{Mean: mode + mean, SD: math.Sqrt(math.Max(m2/m0-mean*mean, 0))}, nil
}

// unsettled reports whether the panels' errors add to denseTol or more. The running total
// drifts by rounding as panels come and go, so a total below the tolerance is summed afresh.
func (ps *panels) unsettled() bool {
	if ps.total >= denseTol {
		return true
	}
	ps.total = 0
	for i := range ps.heap {
		ps.total += ps.heap[i].err
	}
	return ps.total >= denseTol
}

// rebase makes v the reference of every density, so that none can overflow.
func (ps *panels) rebase(v float64) {
	r := math.Exp(ps.top - v)
	for i := range ps.heap {
		p := &ps.heap[i]
		p.s[0], p.s[1], p.s[2], p.err = p.s[0]*r, p.s[1]*r, p.s[2]*r, p.err*r
	}
	ps.mass *= r
	ps.total *= r
	ps.top = v
}

// fill computes p's moments and error from its points.
func (ps *panels) fill(p *panel) {
	var f [3][5]float64 // the densities times 1, dx and dx² at the five points
	for j, v := range p.v {
		e := math.Exp(v - ps.top)
		dx := p.a + float64(j)*p.w/4 - ps.mode
		f[0][j], f[1][j], f[2][j] = e, e*dx, e*dx*dx
	}
	var diff [3]float64
	for k := range f {
		c := p.w / 6 * (f[k][0] + 4*f[k][2] + f[k][4])
		s := p.w / 12 * (f[k][0] + 4*f[k][1] + 2*f[k][2] + 4*f[k][3] + f[k][4])
		p.s[k] = s + (s-c)/15
		diff[k] = math.Abs(s-c) / 15
	}
	mu, sd := math.Abs(ps.mean), ps.sd
	p.err = ((diff[1] + mu*diff[0]) + (diff[2]+(sd*sd+mu*mu)*diff[0]+2*mu*diff[1])/(2*sd)) / ps.mass
}

func (ps *panels) push(p panel) {
	ps.fill(&p)
	ps.total += p.err
	ps.heap = append(ps.heap, p)
	h := ps.heap
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if h[up].err >= h[i].err {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
}

func (ps *panels) pop() panel {
	h := ps.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].err > h[c].err {
			c++
		}
		if h[i].err >= h[c].err {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	ps.heap = h
	ps.total -= top.err
	return top
}
