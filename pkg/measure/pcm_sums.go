package measure

import "math"

// polyPart holds a test's polytomous blocks (its dichotomous ones stay in items.k and items.w),
// flat, in groups of blocks with the same number of steps m: the group's m and its number of
// blocks n, then each block's count w and m values, one for each category h = 1 … m. Relative to
// the test's centre, category h's log-weight at x is h·x + a_h, a_h = u_1 + … + u_h with u_k =
// λ − δ_k (a_0 = 0). Where every |a_h| is within fastReach (and no block has more than
// fastMaxSteps steps) the values are the coefficients c_h = e^(a_h), so that every sum is a
// polynomial in y = e^x, its terms t_h = c_h·y^h a multiplication each, with one exp per
// evaluation for all the blocks (pcm_power.go); otherwise (a test far from its steps, an extreme
// successAtMatch, a long block) they are the a_h themselves, and the log-space sums are always
// used.
type polyPart []float64

// polyMeta is what the sums need to know about the whole of a polyPart.
type polyMeta struct {
	// reach is max |a_h| over every block and top the largest m. While reach + top·|x| <=
	// fastReach every term t_h lies within e^±fastReach and the sums are formed from y by
	// multiplication alone; beyond it each term is its own exp, relative to the largest.
	reach float64
	top   int
	logs  bool    // the blocks hold a_h, not c_h: never the multiplicative sums
	unit  bool    // every block's count is 1
	most  float64 // Σ w·m: the blocks' maximum score
}

// fastReach bounds the terms of the multiplicative sums (see polyMeta): a category's term is at
// most e^340 and a block's sum at most 16·e^340 < 2^495; a power y^h is within e^±340 too, and a
// coefficient c_h within e^±fastReach.
const fastReach = 340

// fastMaxSteps is the most steps an item may have for the multiplicative sums.
const fastMaxSteps = 15

// maxRatioLogits bounds |u| for stepExp and the selection's step ratios g_k = e^(u_k)
// (adaptive_poly.go): e^±700 is a normal float64.
const maxRatioLogits = 700

// fast reports whether the multiplicative sums may be used at x.
func (pm *polyMeta) fast(x float64) bool {
	return !pm.logs && pm.reach+float64(pm.top)*math.Abs(x) <= fastReach
}

// group returns the group at offset i of pp: its m, and its blocks (n of them, 1 + m floats
// each); next is the offset of the next group.
func (pp polyPart) group(i int) (m int, blocks []float64, next int) {
	m, n := int(pp[i]), int(pp[i+1])
	next = i + 2 + n*(1+m)
	return m, pp[i+2 : next : next], next
}

// logits returns a block's a_1 … a_m from its stored values: the values themselves in log form,
// their logs into buf (room for fastMaxSteps) otherwise.
func (pm *polyMeta) logits(vals []float64, buf []float64) []float64 {
	if pm.logs {
		return vals
	}
	buf = buf[:0]
	for _, c := range vals {
		buf = append(buf, math.Log(c))
	}
	return buf
}

// scorePoly is score for a test with polytomous items: the dichotomous items as score sums them,
// then, where the information allows it (plainInfo), the blocks' E are added to their tails;
// otherwise each block's category h (an integer, exact) meets r with the counts, and the blocks'
// E − h are added to the tails.
func (it *items) scorePoly(x, r float64) (excess, info float64) {
	var low, high, count float64
	var e float64
	if len(it.k) > 0 { // the exp only for a test with dichotomous items
		e = math.Exp(-x)
	}
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
		y := math.Exp(x)
		if sum, v := it.poly.powerMean(y); plainEnough(info+v, it.pmeta.most) {
			return (count - r) + (low - high + sum), info + v
		}
		points, frac, v = it.poly.powerScore(y)
	} else {
		points, frac, v = it.poly.slowScore(&it.pmeta, x)
	}
	return (count + points - r) + (low - high + frac), info + v
}

// fastScore2, fastScore3 and fastScoreM are the selection's sums (adaptive_poly.go) over blocks
// held as step ratios g_k = e^(u_k), each block's count w and then g_1 … g_m, at y = e^x, the
// terms t_h = (g_1·y)·…·(g_h·y): Σ w·h, Σ w·(E − h) and Σ w·V, h being each block's category
// nearest its mean score E, the sums formed as powerScore's are.

// fastScore2 is over blocks of 2 steps.
func fastScore2(blocks []float64, y float64) (points, frac, info float64) {
	for ; len(blocks) >= 3; blocks = blocks[3:] {
		w := blocks[0]
		t1 := blocks[1] * y
		t2 := t1 * (blocks[2] * y)
		inv := 1 / (1 + t1 + t2)
		h := math.Floor((t1+2*t2)*inv + 0.5)
		dE := (-h + (1-h)*t1 + (2-h)*t2) * inv
		// V·s0² = Σ_{i<j} (j − i)²·t_i·t_j: positive terms only, so nothing cancels.
		v := (t1 + 4*t2 + t1*t2) * inv * inv
		points += w * h
		frac += w * dE
		info += w * v
	}
	return points, frac, info
}

// fastScore3 is over blocks of 3 steps.
func fastScore3(blocks []float64, y float64) (points, frac, info float64) {
	for ; len(blocks) >= 4; blocks = blocks[4:] {
		w := blocks[0]
		t1 := blocks[1] * y
		t2 := t1 * (blocks[2] * y)
		t3 := t2 * (blocks[3] * y)
		inv := 1 / (1 + t1 + t2 + t3)
		h := math.Floor((t1+2*t2+3*t3)*inv + 0.5)
		dE := (-h + (1-h)*t1 + (2-h)*t2 + (3-h)*t3) * inv
		// V·s0² = Σ_{i<j} (j − i)²·t_i·t_j, as in fastScore2.
		v := (t1*(1+t2+4*t3) + t2*(4+t3) + 9*t3) * inv * inv
		points += w * h
		frac += w * dE
		info += w * v
	}
	return points, frac, info
}

// fastScoreM is over blocks of m steps: the terms are formed twice (a multiplication
// each) rather than stored.
func fastScoreM(blocks []float64, m int, y float64) (points, frac, info float64) {
	for ; len(blocks) >= 1+m; blocks = blocks[1+m:] {
		w, g := blocks[0], blocks[1:1+m]
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

// slowScore is powerScore at x in log space (moments).
func (pp polyPart) slowScore(pm *polyMeta, x float64) (points, frac, info float64) {
	var buf [fastMaxSteps]float64
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		for ; len(blocks) > m; blocks = blocks[1+m:] {
			w := blocks[0]
			h, dE, v := moments(pm.logits(blocks[1:1+m], buf[:]), x)
			points += w * float64(h)
			frac += w * dE
			info += w * v
		}
	}
	return points, frac, info
}

// moments is one block's part of slowScore, from a_1 … a_m at x: its modal category h, E − h and
// V, every term relative to the modal one, so no exp can overflow and a category many logits
// below the modal one keeps its own small probability.
func moments(a []float64, x float64) (h int, dE, v float64) {
	top := 0.0 // category 0's log-weight
	for j, aj := range a {
		if c := float64(j+1)*x + aj; c > top {
			top, h = c, j+1
		}
	}
	s0 := math.Exp(-top)
	s1 := float64(-h) * s0
	s2 := float64(h*h) * s0
	for j, aj := range a {
		p := math.Exp(float64(j+1)*x + aj - top)
		d := float64(j + 1 - h)
		s0 += p
		s1 += d * p
		s2 += d * d * p
	}
	dE = s1 / s0
	return h, dE, max(s2/s0-dE*dE, 0)
}

// logNorm returns log Σ_h exp(a_h − (m − h)·x) from a_1 … a_m (a_0 = 0): the item's log
// normaliser less m·x, which stays of the order of the distance from x to the steps (the terms
// are formed directly, not as a difference of two large numbers).
func logNorm(a []float64, x float64) float64 {
	m := len(a)
	top := -float64(m) * x
	for j, aj := range a {
		top = max(top, aj-float64(m-j-1)*x)
	}
	s := math.Exp(-float64(m)*x - top)
	for j, aj := range a {
		s += math.Exp(aj - float64(m-j-1)*x - top)
	}
	return top + math.Log(s)
}

// logNormPoly is Σ w·logNorm over the polytomous blocks, by multiplication where it may be
// (logNormPower).
func (it *items) logNormPoly(x float64) float64 {
	if it.pmeta.fast(x) {
		return it.logNormPower(x)
	}
	var buf [fastMaxSteps]float64
	sum := 0.0
	pp := it.poly
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		for ; len(blocks) > m; blocks = blocks[1+m:] {
			sum += blocks[0] * logNorm(it.pmeta.logits(blocks[1:1+m], buf[:]), x)
		}
	}
	return sum
}
