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

// polyItem is one block of polytomous items: a_0 … a_m and the block's count.
type polyItem struct {
	a []float64
	w float64
}

// polyPart holds a test's polytomous items (its dichotomous ones stay in items.k and items.w).
type polyPart struct {
	items []polyItem
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
	for i := range it.poly.items {
		pi := &it.poly.items[i]
		h, dE, v := pi.moments(x)
		count += pi.w * float64(h)
		frac += pi.w * dE
		info += pi.w * v
	}
	return (count - r) + (low - high + frac), info
}

// logNormPoly is Σ w·logNorm over the polytomous blocks.
func (it *items) logNormPoly(x float64) float64 {
	sum := 0.0
	for i := range it.poly.items {
		pi := &it.poly.items[i]
		sum += pi.w * pi.logNorm(x)
	}
	return sum
}

// mlePoly solves Σ E_i(x) = r for 0 < r < n (n the test's maximum score) on a test with
// polytomous items. The score increases in x from 0 to n, so the root is bracketed by walking out
// from a first guess in doubling steps; the search inside is mle's safeguarded Newton.
func (it *items) mlePoly(r float64) float64 {
	x := it.mean - it.lambda + math.Log(r/(it.n-r))
	lo, hi := x, x
	for step := 1.0; ; step *= 2 {
		if g, _ := it.score(lo, r); g <= 0 || step > 1e6 {
			break
		}
		hi, lo = lo, lo-step
	}
	for step := 1.0; ; step *= 2 {
		if g, _ := it.score(hi, r); g >= 0 || step > 1e6 {
			break
		}
		lo, hi = hi, hi+step
	}
	if lo == hi {
		return lo
	}
	return it.newton(lo, hi, 0.5*(lo+hi), r)
}

// preparePoly fills the polytomous blocks of t (those with two or more steps) into it.poly, in
// logits relative to it.centre, and returns the sum of their count-weighted steps (logits).
func (p *prepared) preparePoly(it *items, t Test) float64 {
	var flat []float64
	size, sum := 0, 0.0
	for _, d := range t.Items {
		if len(d.Steps) >= 2 {
			size += len(d.Steps) + 1
		}
	}
	flat = make([]float64, 0, size)
	it.poly = &polyPart{}
	for _, d := range t.Items {
		if len(d.Steps) < 2 {
			continue
		}
		start := len(flat)
		acc := 0.0
		flat = append(flat, 0)
		for k, step := range d.Steps {
			acc += (step - it.centre) * p.invS
			flat = append(flat, float64(k+1)*p.lambda-acc)
		}
		it.poly.items = append(it.poly.items, polyItem{a: flat[start:len(flat):len(flat)], w: float64(d.Count)})
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
