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

// mlePoly solves Σ E_i(x) = r for 0 < r < n (n the test's maximum score) on a test with
// polytomous items. The score increases in x from 0 to n, so the root is bracketed by walking out
// from a first guess: the first step is the Newton step from it, a quarter longer so that it
// usually crosses the root (at most 2 logits), and each further step doubles. The search inside
// is mle's safeguarded Newton, from the last point of the walk.
func (it *items) mlePoly(r float64) float64 {
	x := it.mean - it.lambda + math.Log(r/(it.n-r))
	g, info := it.score(x, r)
	if g == 0 {
		return x
	}
	step := min(1.25*math.Abs(g)/info, 2)
	if !(step > 1e-9) { // the guess is the root to well within the tolerance, or info is NaN
		step = 1e-9
	}
	for ; step < 1e6; step *= 2 {
		next := x + step
		if g > 0 {
			next = x - step
		}
		gn, infoN := it.score(next, r)
		if gn == 0 {
			return next
		}
		if (gn > 0) != (g > 0) {
			return it.newtonFrom(min(x, next), max(x, next), next, r, gn, infoN)
		}
		x, g = next, gn
	}
	return x
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
