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

// polyPart holds a test's polytomous blocks (its dichotomous ones stay in items.k and items.w),
// flat, block after block: the block's number of steps m, its count w, then for each step k the
// ratio g_k = e^(u_k) of category k's term to category k − 1's at x = 0, u_k = λ − δ_k, so that
// a_h = u_1 + … + u_h. The ratios make every sum a polynomial in y = e^x: the terms are
// t_h = (g_1·y)·…·(g_h·y), one multiplication each, with one exp per evaluation for all the
// blocks. When some u_k is too large for its exponential (|u_k| > maxRatioLogits, only with an
// extreme successAtMatch) the u_k themselves are stored and the log-space sums always used.
type polyPart []float64

// polyMeta is what the sums need to know about the whole of a polyPart.
type polyMeta struct {
	// reach is max |a_h| over every block and top the largest m. While reach + top·|x| <=
	// fastReach every term t_h lies within e^±fastReach and the sums are formed from y by
	// multiplication alone; beyond it each term is its own exp, relative to the largest.
	reach float64
	top   int
	logs  bool // the blocks hold u_k, not g_k: never the multiplicative sums
}

// fastReach bounds the terms of the multiplicative sums (see polyMeta): a category's term is at
// most e^340 and each item's sum at most (m + 1)·e^340, so a product of sums renormalised below
// 1e150 (logNormPoly) stays below 1e300; in the nested (Horner) form of a sum the partial sums
// are ratios of two terms, at most e^680.
const fastReach = 340

// fastMaxSteps is the most steps an item may have for the multiplicative sums (their terms are
// kept on the stack).
const fastMaxSteps = 15

// maxRatioLogits bounds |u_k| for storing g_k = e^(u_k): e^±700 is a normal float64, and
// log(g_k) gives u_k back to the last bit or two for the log-space sums.
const maxRatioLogits = 700

// fast reports whether the multiplicative sums may be used at x.
func (pm *polyMeta) fast(x float64) bool {
	return !pm.logs && pm.top <= fastMaxSteps && pm.reach+float64(pm.top)*math.Abs(x) <= fastReach
}

// block returns the block at offset i of pp (its count and stored values) and the next offset.
func (pp polyPart) block(i int) (w float64, vals []float64, next int) {
	m := int(pp[i])
	next = i + 2 + m
	return pp[i+1], pp[i+2 : next : next], next
}

// logits fills a with a_0 … a_m of a block from its stored values.
func (pm *polyMeta) logits(vals []float64, a []float64) []float64 {
	a = append(a[:0], 0)
	acc := 0.0
	for _, v := range vals {
		if !pm.logs {
			v = math.Log(v)
		}
		acc += v
		a = append(a, acc)
	}
	return a
}

// fastScore returns, at y = e^x, Σ w·h, Σ w·(E − h) and Σ w·V over the blocks of pp, h being
// each block's category nearest its mean score E, from the terms t_h (no exp). E − h and V are
// sums about h (each term at most m² in size, so none rounds away and V cannot cancel), so E
// keeps its precision near 0 and near m and V stays positive where one category holds nearly
// everything. The terms are formed twice (a multiplication each) rather than stored.
func (pp polyPart) fastScore(y float64) (points, frac, info float64) {
	for i := 0; i < len(pp); {
		w, g, next := pp.block(i)
		i = next
		s0, s1, c, j := 1.0, 0.0, 1.0, 0.0
		for _, gk := range g {
			c *= gk * y
			j++
			s0 += c
			s1 += j * c
		}
		inv := 1 / s0
		h := math.Floor(s1*inv + 0.5)
		d := -h
		d1, d2 := d, d*d // category 0, t_0 = 1
		c = 1
		for _, gk := range g {
			c *= gk * y
			d++
			d1 += d * c
			d2 += d * d * c
		}
		dE := d1 * inv
		points += w * h
		frac += w * dE
		info += w * max(d2*inv-dE*dE, 0)
	}
	return points, frac, info
}

// slowScore is fastScore at x in log space (moments).
func (pp polyPart) slowScore(pm *polyMeta, x float64) (points, frac, info float64) {
	var buf [fastMaxSteps + 1]float64
	for i := 0; i < len(pp); {
		w, vals, next := pp.block(i)
		i = next
		h, dE, v := moments(pm.logits(vals, buf[:0]), x)
		points += w * float64(h)
		frac += w * dE
		info += w * v
	}
	return points, frac, info
}

// moments is one block's part of fastScore in log space, from a_0 … a_m at x: its modal
// category h, E − h and V, every term relative to the modal one, so no exp can overflow and a
// category many logits below the modal one keeps its own small probability.
func moments(a []float64, x float64) (h int, dE, v float64) {
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
	return h, dE, max(s2/s0-dE*dE, 0)
}

// logNorm returns log Σ_h exp(a_h − (m − h)·x): the item's log normaliser less m·x, which stays
// of the order of the distance from x to the steps (the terms are formed directly, not as a
// difference of two large numbers).
func logNorm(a []float64, x float64) float64 {
	m := len(a) - 1
	top := math.Inf(-1)
	for j := range a {
		top = max(top, a[j]-float64(m-j)*x)
	}
	s := 0.0
	for j := range a {
		s += math.Exp(a[j] - float64(m-j)*x - top)
	}
	return top + math.Log(s)
}

// scorePoly is score for a test with polytomous items: the dichotomous items as score sums them,
// then each polytomous block's category h (an integer, exact) meets r with the counts, and the
// blocks' E − h are added to the dichotomous items' tails.
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
	var points, frac, v float64
	if it.pmeta.fast(x) {
		points, frac, v = it.poly.fastScore(math.Exp(x))
	} else {
		points, frac, v = it.poly.slowScore(&it.pmeta, x)
	}
	return (count + points - r) + (low - high + frac), info + v
}

// logNormPoly is Σ w·logNorm over the polytomous blocks. Where the sums may be formed by
// multiplication (polyMeta.fast) it is Σ w·log Σ_h t_h − M·x, each block's sum in nested form
// 1 + g_1·y·(1 + g_2·y·(…)), the logs of unit blocks taken together as the log of a product, as
// logProduct does: two running products taken in turn (so that each multiplication need not
// wait for the one before), a product above 2^500 moving its binary exponent into an integer
// count (every sum lies in [1, 2^495]: it holds t_0 = 1, and each term is at most e^340).
func (it *items) logNormPoly(x float64) float64 {
	pp := it.poly
	sum := 0.0
	if !it.pmeta.fast(x) {
		var buf [fastMaxSteps + 1]float64
		for i := 0; i < len(pp); {
			w, vals, next := pp.block(i)
			sum += w * logNorm(it.pmeta.logits(vals, buf[:0]), x)
			i = next
		}
		return sum
	}
	const fold = 0x1p500
	y := math.Exp(x)
	p0, p1, ex := 1.0, 1.0, 0
	most := 0.0
	for i := 0; i < len(pp); {
		w, g, next := pp.block(i)
		i = next
		norm := 1.0
		for k := len(g) - 1; k >= 0; k-- {
			norm = 1 + g[k]*y*norm
		}
		most += w * float64(len(g))
		if w != 1 {
			sum += w * math.Log(norm)
			continue
		}
		if p0 > fold {
			p0, ex = mantissa(p0, ex)
		}
		p0, p1 = p1, p0*norm
	}
	p0, ex = mantissa(p0, ex)
	p1, ex = mantissa(p1, ex)
	return sum + float64(ex)*math.Ln2 + math.Log(p0*p1) - most*x
}

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

// polySize is the room a test's polytomous blocks take in a polyPart.
func polySize(t Test) int {
	size := 0
	for _, d := range t.Items {
		if len(d.Steps) >= 2 {
			size += 2 + len(d.Steps)
		}
	}
	return size
}

// preparePoly fills the polytomous blocks of t (those with two or more steps) into it.poly, whose
// room is pp (polySize floats), in logits relative to it.centre, and returns the sum of their
// count-weighted steps (logits).
func (p *prepared) preparePoly(it *items, t Test, pp polyPart) float64 {
	sum := 0.0
	meta := polyMeta{}
	i := 0
	for _, d := range t.Items {
		if len(d.Steps) < 2 {
			continue
		}
		pp[i], pp[i+1] = float64(len(d.Steps)), float64(d.Count)
		vals := pp[i+2 : i+2+len(d.Steps)]
		acc, a := 0.0, 0.0
		for k, step := range d.Steps {
			delta := (step - it.centre) * p.invS
			acc += delta
			u := p.lambda - delta
			a += u
			vals[k] = u
			meta.reach = max(meta.reach, math.Abs(a))
			meta.logs = meta.logs || math.Abs(u) > maxRatioLogits
		}
		meta.top = max(meta.top, len(d.Steps))
		sum += float64(d.Count) * acc
		i += 2 + len(d.Steps)
	}
	if !meta.logs {
		for i := 0; i < len(pp); {
			_, vals, next := pp.block(i)
			for k, u := range vals {
				vals[k] = math.Exp(u)
			}
			i = next
		}
	}
	it.poly, it.pmeta = pp, meta
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
