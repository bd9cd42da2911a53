package measure

import (
	"errors"
	"fmt"
	"math"
)

// The partial credit model (METHOD §13, Masters 1982). An item with steps d_1 … d_m (measure
// units) is scored 0 … m; with z_k = (θ − d_k)/s + λ (§1's λ, so that one step is §1's item),
//
//	P(X = x | θ) = exp(Σ_{k≤x} z_k) / Σ_{h=0..m} exp(Σ_{k≤h} z_k).
//
// Inside the estimators an item is held relative to the test's centre c as the m + 1 numbers
// a_h = h·λ − Σ_{k≤h} δ_k (δ_k = (d_k − c)/s, a_0 = 0), so that at x = (θ − c)/s the log of
// category h's unnormalised probability is c_h = h·x + a_h. Everything is computed relative to
// the largest c_h (log-sum-exp): no exp can overflow, and a category many logits below the
// modal one keeps its own small probability instead of rounding against 1.

// polyItem is one block of polytomous items: a_0 … a_m, their exponentials e^(a_h) and the
// block's count.
type polyItem struct {
	a, ea []float64
	w     float64
}

// polyPart holds a test's polytomous items (its dichotomous ones stay in items.k and items.w).
type polyPart struct {
	items []polyItem
	// reach is max |a_h| over every item and top the largest m. While reach + top·|x| <=
	// fastReach every term e^(a_h)·e^(h·x) lies within e^±fastReach, and the sums are formed from
	// e^x and the stored e^(a_h) by multiplication alone (one exp per evaluation, not one per
	// category); beyond it each term is its own exp, relative to the largest.
	reach float64
	top   int
}

// fastReach bounds the terms of the multiplicative sums (see polyPart): a category's term is at
// most e^340 and each item's sum at most (m + 1)·e^340, so a product of sums renormalised below
// 1e150 (logNormPoly) stays below 1e300.
const fastReach = 340

// fastMaxSteps is the most steps an item may have for the multiplicative sums (their terms are
// kept on the stack).
const fastMaxSteps = 15

// fast reports whether the multiplicative sums may be used at x.
func (pp *polyPart) fast(x float64) bool {
	return pp.top <= fastMaxSteps && pp.reach+float64(pp.top)*math.Abs(x) <= fastReach
}

// fastMoments is moments from the terms t_h = e^(a_h)·y^h, y = e^x (no exp).
func (pi *polyItem) fastMoments(y float64) (h int, dE, v float64) {
	var t [fastMaxSteps + 1]float64
	ea := pi.ea
	pow, best := 1.0, 0.0
	for j := range ea {
		t[j] = ea[j] * pow
		if t[j] > best {
			best, h = t[j], j
		}
		pow *= y
	}
	var s0, s1, s2 float64
	for j := range ea {
		d := float64(j - h)
		s0 += t[j]
		s1 += d * t[j]
		s2 += d * d * t[j]
	}
	dE = s1 / s0
	return h, dE, math.Max(s2/s0-dE*dE, 0)
}

// moments returns, at x, the item's modal category h, E − h and the variance V of its score.
// E − h and V are sums over the categories' probabilities relative to the mode (each term is
// then at most m² in size and none rounds away), so E keeps its precision where it is near 0 or
// near m, and V stays positive however far x is from the steps.
func (pi *polyItem) moments(x float64) (h int, dE, v float64) {
	a := pi.a
	top := a[0]
	for j := 1; j < len(a); j++ {
		if c := float64(j)*x + a[j]; c > top {
			top, h = c, j
		}
	}
	var s0, s1, s2 float64
	for j := range a {
		p := math.Exp(float64(j)*x + a[j] - top)
		d := float64(j - h)
		s0 += p
		s1 += d * p
		s2 += d * d * p
	}
	dE = s1 / s0
	return h, dE, math.Max(s2/s0-dE*dE, 0)
}

// logNorm returns log Σ_h exp(a_h − (m − h)·x): the item's log normaliser less m·x, which stays
// of the order of the distance from x to the steps (the terms are formed directly, not as a
// difference of two large numbers).
func (pi *polyItem) logNorm(x float64) float64 {
	a := pi.a
	m := len(a) - 1
	top := math.Inf(-1)
	for j := range a {
		top = math.Max(top, a[j]-float64(m-j)*x)
	}
	s := 0.0
	for j := range a {
		s += math.Exp(a[j] - float64(m-j)*x - top)
	}
	return top + math.Log(s)
}

// scorePoly is score for a test with polytomous items: the dichotomous items as score sums them,
// then each polytomous block's modal category (an integer, exact) meets r with the counts, and
// the blocks' E − h are added to the dichotomous items' tails.
func (it *items) scorePoly(x, r float64) (excess, info float64) {
	e := math.Exp(-x)
	var low, high, count float64
	for i, k := range it.k {
		ek := e * k
		q := 1 / (1 + ek)
		w := it.w[i]
		var c float64
		if ek > 1 {
			c = 1 - q
			low += w * q
		} else {
			c = ek * q
			high += w * c
			count += w
		}
		info += w * q * c
	}
	var frac float64
	pp := it.poly
	if pp.fast(x) {
		y := math.Exp(x)
		for i := range pp.items {
			pi := &pp.items[i]
			h, dE, v := pi.fastMoments(y)
			count += pi.w * float64(h)
			frac += pi.w * dE
			info += pi.w * v
		}
		return (count - r) + (low - high + frac), info
	}
	for i := range pp.items {
		pi := &pp.items[i]
		h, dE, v := pi.moments(x)
		count += pi.w * float64(h)
		frac += pi.w * dE
		info += pi.w * v
	}
	return (count - r) + (low - high + frac), info
}

// logNormPoly is Σ w·logNorm over the polytomous blocks. Where the sums may be formed by
// multiplication (polyPart.fast) it is Σ w·log Σ_h e^(a_h)·y^h − M·x with y = e^x, the logs of
// unit blocks taken together as the log of their product, renormalised below 1e150.
func (it *items) logNormPoly(x float64) float64 {
	pp := it.poly
	sum := 0.0
	if !pp.fast(x) {
		for i := range pp.items {
			pi := &pp.items[i]
			sum += pi.w * pi.logNorm(x)
		}
		return sum
	}
	y := math.Exp(x)
	prod, most := 1.0, 0.0
	for i := range pp.items {
		pi := &pp.items[i]
		norm, pow := 0.0, 1.0
		for _, e := range pi.ea {
			norm += e * pow
			pow *= y
		}
		most += pi.w * float64(len(pi.ea)-1)
		if pi.w != 1 {
			sum += pi.w * math.Log(norm)
			continue
		}
		if prod *= norm; prod > 1e150 || prod < 1e-150 {
			sum += math.Log(prod)
			prod = 1
		}
	}
	return sum + math.Log(prod) - most*x
}

// mlePoly solves Σ E_i(x) = r for 0 < r < n (n the test's maximum score) on a test with
// polytomous items. The score increases in x from 0 to n, so the root is bracketed by walking out
// from a first guess in doubling steps; the search inside is mle's safeguarded Newton.
func (it *items) mlePoly(r float64) float64 {
	x := it.mean - it.lambda + math.Log(r/(it.n-r))
	lo, hi := x, x
	g, _ := it.score(x, r)
	switch {
	case g > 0:
		for step := 1.0; g > 0 && step < 1e6; step *= 2 {
			hi, lo = lo, lo-step
			g, _ = it.score(lo, r)
		}
	case g < 0:
		for step := 1.0; g < 0 && step < 1e6; step *= 2 {
			lo, hi = hi, hi+step
			g, _ = it.score(hi, r)
		}
	default:
		return x
	}
	if !(x > lo && x < hi) {
		x = 0.5 * (lo + hi)
	}
	return it.newton(lo, hi, x, r)
}

// preparePoly fills the polytomous blocks of t (those with two or more steps) into it.poly, in
// logits relative to it.centre, and returns the sum of their count-weighted steps (logits).
func (p *prepared) preparePoly(it *items, t Test, poly int) float64 {
	var flat []float64
	size, sum := 0, 0.0
	for _, d := range t.Items {
		if len(d.Steps) >= 2 {
			size += len(d.Steps) + 1
		}
	}
	flat = make([]float64, 0, size)
	exps := make([]float64, size)
	pp := &polyPart{items: make([]polyItem, 0, poly)}
	it.poly = pp
	for _, d := range t.Items {
		if len(d.Steps) < 2 {
			continue
		}
		start := len(flat)
		acc := 0.0
		flat = append(flat, 0)
		for k, step := range d.Steps {
			acc += (step - it.centre) * p.invS
			a := float64(k+1)*p.lambda - acc
			flat = append(flat, a)
			pp.reach = math.Max(pp.reach, math.Abs(a))
		}
		a := flat[start:len(flat):len(flat)]
		ea := exps[start:len(flat):len(flat)]
		for j, v := range a {
			ea[j] = math.Exp(v)
		}
		pp.items = append(pp.items, polyItem{a: a, ea: ea, w: float64(d.Count)})
		pp.top = max(pp.top, len(d.Steps))
		sum += float64(d.Count) * acc
	}
	return sum
}

// CategoryProbabilities returns P(X = 0 … m | ability) of an item with these steps (measure
// units; one step is §1's dichotomous item), appended to out. The steps must be finite.
func (f *Framework) CategoryProbabilities(ability float64, steps []float64, out []float64) ([]float64, error) {
	p, err := f.prepared()
	if err != nil {
		return out, err
	}
	if len(steps) == 0 {
		return out, errors.New("category probabilities: no steps")
	}
	if !finite(ability) {
		return out, fmt.Errorf("category probabilities: ability %v is not finite", ability)
	}
	for k, d := range steps {
		if !finite(d) {
			return out, fmt.Errorf("category probabilities: step %d: %v is not finite", k+1, d)
		}
	}
	return p.categories(ability, steps, out), nil
}

// categories appends P(X = 0 … m | θ) of an item with these steps (measure units) to out.
func (p *prepared) categories(theta float64, steps []float64, out []float64) []float64 {
	start := len(out)
	c, top := 0.0, 0.0
	out = append(out, 0)
	for _, d := range steps {
		c += (theta-d)*p.invS + p.lambda
		out = append(out, c)
		top = math.Max(top, c)
	}
	cats := out[start:]
	s := 0.0
	for j, v := range cats {
		cats[j] = math.Exp(v - top)
		s += cats[j]
	}
	for j := range cats {
		cats[j] /= s
	}
	return out
}

// itemMoments returns E, V and the fourth central moment C of the score of an item with these
// steps (measure units) at θ, from its category probabilities (the two-pass sums, so C does not
// cancel).
func (p *prepared) itemMoments(theta float64, steps []float64) (e, v, c float64) {
	var buf [16]float64
	cats := p.categories(theta, steps, buf[:0])
	for j, q := range cats {
		e += float64(j) * q
	}
	for j, q := range cats {
		d := float64(j) - e
		v += d * d * q
		c += d * d * d * d * q
	}
	return e, v, c
}

// scoreMoments returns E and V of the score of an item with these steps (measure units) at θ,
// for units per logit s and §1's λ, in log space and relative to the modal category (as
// polyItem.moments): the selection's key for a polytomous item.
func scoreMoments(theta float64, steps []float64, s, lambda float64) (e, v float64) {
	var buf [16]float64
	logs := append(buf[:0], 0)
	c, top, mode := 0.0, 0.0, 0
	for k, d := range steps {
		c += (theta-d)/s + lambda
		logs = append(logs, c)
		if c > top {
			top, mode = c, k+1
		}
	}
	var s0, s1, s2 float64
	for j, l := range logs {
		p := math.Exp(l - top)
		d := float64(j - mode)
		s0 += p
		s1 += d * p
		s2 += d * d * p
	}
	dE := s1 / s0
	return float64(mode) + dE, math.Max(s2/s0-dE*dE, 0)
}
