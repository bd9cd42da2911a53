package measure

import "math"

// polyPart holds a test's polytomous blocks (its dichotomous ones stay in items.k and items.w),
// flat, in groups of blocks with the same number of steps m: the group's m and its number of
// blocks n, then each block's count w and, for each step k, the ratio g_k = e^(u_k) of category
// k's term to category k − 1's at x = 0, u_k = λ − δ_k, so that a_h = u_1 + … + u_h. The ratios
// make every sum a polynomial in y = e^x: the terms are t_h = (g_1·y)·…·(g_h·y), a
// multiplication each, with one exp per evaluation for all the blocks; a group's loop has a
// fixed shape (unrolled for 2 and 3 steps). When some u_k is too large for its exponential
// (|u_k| > maxRatioLogits, only with an extreme successAtMatch) the u_k themselves are stored
// and the log-space sums always used.
type polyPart []float64

// polyMeta is what the sums need to know about the whole of a polyPart.
type polyMeta struct {
	// reach is max |a_h| over every block and top the largest m. While reach + top·|x| <=
	// fastReach every term t_h lies within e^±fastReach and the sums are formed from y by
	// multiplication alone; beyond it each term is its own exp, relative to the largest.
	reach float64
	top   int
	logs  bool    // the blocks hold u_k, not g_k: never the multiplicative sums
	unit  bool    // every block's count is 1
	most  float64 // Σ w·m: the blocks' maximum score
}

// fastReach bounds the terms of the multiplicative sums (see polyMeta): a category's term is at
// most e^340 and a block's sum at most 16·e^340 < 2^495; in the nested (Horner) form of a sum the
// partial sums are ratios of two terms, at most 16·e^680.
const fastReach = 340

// fastMaxSteps is the most steps an item may have for the multiplicative sums.
const fastMaxSteps = 15

// maxRatioLogits bounds |u_k| for storing g_k = e^(u_k): e^±700 is a normal float64, and
// log(g_k) gives u_k back to within an ulp of it for the log-space sums.
const maxRatioLogits = 700

// fast reports whether the multiplicative sums may be used at x.
func (pm *polyMeta) fast(x float64) bool {
	return !pm.logs && pm.top <= fastMaxSteps && pm.reach+float64(pm.top)*math.Abs(x) <= fastReach
}

// group returns the group at offset i of pp: its m, and its blocks (n of them, 1 + m floats
// each); next is the offset of the next group.
func (pp polyPart) group(i int) (m int, blocks []float64, next int) {
	m, n := int(pp[i]), int(pp[i+1])
	next = i + 2 + n*(1+m)
	return m, pp[i+2 : next : next], next
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

// scorePoly is score for a test with polytomous items: the dichotomous items as score sums them,
// then each polytomous block's category h (an integer, exact) meets r with the counts, and the
// blocks' E − h are added to the dichotomous items' tails.
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
		points, frac, v = it.poly.fastScore(math.Exp(x))
	} else {
		points, frac, v = it.poly.slowScore(&it.pmeta, x)
	}
	return (count + points - r) + (low - high + frac), info + v
}

// fastScore returns, at y = e^x, Σ w·h, Σ w·(E − h) and Σ w·V over the blocks of pp, h being
// each block's category nearest its mean score E, from the terms t_h (no exp). E − h is a sum
// about h (each term at most m in size, so none rounds away), so E keeps its precision near 0
// and near m; V is a sum about h too (fastScoreM), or for 2 and 3 steps Σ_{i<j} (j − i)²·t_i·t_j
// over s0², whose terms are all positive: either way it cannot cancel, and stays positive where
// one category holds nearly everything.
func (pp polyPart) fastScore(y float64) (points, frac, info float64) {
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		var p, f, v float64
		switch m {
		case 2:
			p, f, v = fastScore2(blocks, y)
		case 3:
			p, f, v = fastScore3(blocks, y)
		default:
			p, f, v = fastScoreM(blocks, m, y)
		}
		points += p
		frac += f
		info += v
	}
	return points, frac, info
}

// fastScore2 is fastScore over blocks of 2 steps.
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

// fastScore3 is fastScore over blocks of 3 steps.
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

// fastScoreM is fastScore over blocks of m steps: the terms are formed twice (a multiplication
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

// slowScore is fastScore at x in log space (moments).
func (pp polyPart) slowScore(pm *polyMeta, x float64) (points, frac, info float64) {
	var buf [fastMaxSteps + 1]float64
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		for ; len(blocks) > 0; blocks = blocks[1+m:] {
			w := blocks[0]
			var h int
			var dE, v float64
			if m > fastMaxSteps { // stored as u_k (preparePoly); no buffer holds its a_h
				h, dE, v = longMoments(blocks[1:1+m], x)
			} else {
				h, dE, v = moments(pm.logits(blocks[1:1+m], buf[:0]), x)
			}
			points += w * float64(h)
			frac += w * dE
			info += w * v
		}
	}
	return points, frac, info
}

// moments is one block's part of slowScore, from a_0 … a_m at x: its modal category h, E − h and
// V, every term relative to the modal one, so no exp can overflow and a category many logits
// below the modal one keeps its own small probability.
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

// logNormPoly is Σ w·logNorm over the polytomous blocks. Where the sums may be formed by
// multiplication (polyMeta.fast) it is Σ w·log Σ_h t_h − M·x, each block's sum in nested form
// 1 + g_1·y·(1 + g_2·y·(…)), the logs of unit blocks taken together as the log of a product, as
// logProduct does: two running products (so that each multiplication need not wait for the one
// before; unit blocks of 2 and 3 steps two at a time), a product above 2^500 moving its binary
// exponent into an integer count (every sum lies in [1, 2^495]: it holds t_0 = 1, and each term
// is at most e^340).
func (it *items) logNormPoly(x float64) float64 {
	pp := it.poly
	sum := 0.0
	if !it.pmeta.fast(x) {
		var buf [fastMaxSteps + 1]float64
		for i := 0; i < len(pp); {
			m, blocks, next := pp.group(i)
			i = next
			for ; len(blocks) > 0; blocks = blocks[1+m:] {
				if m > fastMaxSteps { // stored as u_k (preparePoly); no buffer holds its a_h
					sum += blocks[0] * longLogNorm(blocks[1:1+m], x)
					continue
				}
				sum += blocks[0] * logNorm(it.pmeta.logits(blocks[1:1+m], buf[:0]), x)
			}
		}
		return sum
	}
	const fold = 0x1p500
	y := math.Exp(x)
	p0, p1, ex := 1.0, 1.0, 0
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		if it.pmeta.unit && m == 2 { // the common case, two blocks at a time, without the count's test
			for ; len(blocks) >= 6; blocks = blocks[6:] {
				b := blocks[:6:6]
				if p0 > fold || p1 > fold {
					p0, ex = mantissa(p0, ex)
					p1, ex = mantissa(p1, ex)
				}
				p0 *= 1 + b[1]*y*(1+b[2]*y)
				p1 *= 1 + b[4]*y*(1+b[5]*y)
			}
			if len(blocks) == 3 {
				if p0 > fold {
					p0, ex = mantissa(p0, ex)
				}
				p0 *= 1 + blocks[1]*y*(1+blocks[2]*y)
			}
			continue
		}
		if it.pmeta.unit && m == 3 { // likewise
			for ; len(blocks) >= 8; blocks = blocks[8:] {
				b := blocks[:8:8]
				if p0 > fold || p1 > fold {
					p0, ex = mantissa(p0, ex)
					p1, ex = mantissa(p1, ex)
				}
				p0 *= 1 + b[1]*y*(1+b[2]*y*(1+b[3]*y))
				p1 *= 1 + b[5]*y*(1+b[6]*y*(1+b[7]*y))
			}
			if len(blocks) == 4 {
				if p0 > fold {
					p0, ex = mantissa(p0, ex)
				}
				p0 *= 1 + blocks[1]*y*(1+blocks[2]*y*(1+blocks[3]*y))
			}
			continue
		}
		for ; len(blocks) > 0; blocks = blocks[1+m:] {
			w := blocks[0]
			var norm float64
			switch m {
			case 2:
				norm = 1 + blocks[1]*y*(1+blocks[2]*y)
			case 3:
				norm = 1 + blocks[1]*y*(1+blocks[2]*y*(1+blocks[3]*y))
			default:
				norm = 1
				for k := m; k >= 1; k-- {
					norm = 1 + blocks[k]*y*norm
				}
			}
			if w != 1 {
				sum += w * math.Log(norm)
				continue
			}
			if p0 > fold {
				p0, ex = mantissa(p0, ex)
			}
			p0, p1 = p1, p0*norm
		}
	}
	p0, ex = mantissa(p0, ex)
	p1, ex = mantissa(p1, ex)
	return sum + float64(ex)*math.Ln2 + math.Log(p0*p1) - it.pmeta.most*x
}

// polyCounts is what preparing a test learns of its polytomous blocks while checking them: how
// many blocks have each number of steps (count[fastMaxSteps+1]: more steps, each a group of its
// own), the room they take in a polyPart, whether some count is not 1, and Σ count·m.
type polyCounts struct {
	count   [fastMaxSteps + 2]int
	size    int
	notUnit bool
	most    float64
}

// add counts block d in.
func (pc *polyCounts) add(d Difficulty) {
	m := len(d.Steps)
	c := min(m, fastMaxSteps+1)
	if m > fastMaxSteps || pc.count[c] == 0 { // a new group's m and n
		pc.size += 2
	}
	pc.count[c]++
	pc.size += 1 + m
	pc.notUnit = pc.notUnit || d.Count != 1
	pc.most += float64(d.Count * m)
}

// preparePoly fills the polytomous blocks of t (those with two or more steps; pc counted them)
// into pp (pc.size floats), grouped by number of steps in ascending order, in logits relative to
// centre, and returns what the sums need to know of them and the sum of their count-weighted
// steps (logits). A u_k beyond maxRatioLogits has every block filled again with the u_k
// themselves. (Nothing is stored through a pointer, so that the caller's buffer for pp can stay
// on its stack.)
func (p *prepared) preparePoly(centre float64, t Test, pp polyPart, pc *polyCounts) (polyMeta, float64) {
	meta := polyMeta{unit: !pc.notUnit, most: pc.most}
	// A block of more than fastMaxSteps steps keeps the sums in log space, where the ratios would
	// be taken back to logs at every evaluation: the u_k are stored at once.
	long := pc.count[fastMaxSteps+1] > 0
	meta.logs = long
	sum := p.fillPoly(centre, t, pp, pc.count, &meta, long)
	if meta.logs && !long {
		p.fillPoly(centre, t, pp, pc.count, &meta, true)
	}
	return meta, sum
}

// fillPoly is one filling of preparePoly: g_k = e^(u_k), or u_k with logs.
func (p *prepared) fillPoly(centre float64, t Test, pp polyPart, count [fastMaxSteps + 2]int, meta *polyMeta, logs bool) float64 {
	sum := 0.0
	i := 0
	for m := 2; m <= fastMaxSteps+1; m++ {
		if count[m] == 0 {
			continue
		}
		for _, d := range t.Items {
			switch n := len(d.Steps); {
			case n < 2 || n <= fastMaxSteps && n != m || n > fastMaxSteps && m <= fastMaxSteps:
				continue
			case n > fastMaxSteps: // a group of its own
				pp[i], pp[i+1] = float64(n), 1
				i += 2
			case count[m] > 0: // the group's first block
				pp[i], pp[i+1] = float64(m), float64(count[m])
				i += 2
				count[m] = 0
			}
			pp[i] = float64(d.Count)
			i++
			acc := p.fillBlock(centre, d.Steps, pp[i:i+len(d.Steps)], meta, logs)
			sum += float64(d.Count) * acc
			i += len(d.Steps)
		}
	}
	return sum
}

// fillBlock writes one block's g_k (or u_k with logs) into vals, widens meta by it, and returns
// the sum of its δ_k.
func (p *prepared) fillBlock(centre float64, steps, vals []float64, meta *polyMeta, logs bool) float64 {
	acc, a, reach, far := 0.0, 0.0, meta.reach, false
	for k, step := range steps {
		delta := (step - centre) * p.invS
		acc += delta
		u := p.lambda - delta
		a += u
		reach = max(reach, math.Abs(a))
		far = far || math.Abs(u) > maxRatioLogits
		if logs {
			vals[k] = u
		} else {
			vals[k] = 0 // beyond maxRatioLogits: filled again with the u_k
			if math.Abs(u) <= maxRatioLogits {
				vals[k] = stepExp(u)
			}
		}
	}
	meta.reach = reach
	meta.logs = meta.logs || far
	meta.top = max(meta.top, len(steps))
	return acc
}

// longMoments is moments for a block of more than fastMaxSteps steps from its u_k, a_h formed as
// it goes (a_h = u_1 + … + u_h, added in the same order as logits adds them).
func longMoments(u []float64, x float64) (h int, dE, v float64) {
	top, a := 0.0, 0.0
	for j, uj := range u {
		a += uj
		if c := float64(j+1)*x + a; c > top {
			top, h = c, j+1
		}
	}
	s0 := math.Exp(-top)
	s1 := float64(-h) * s0
	s2 := float64(h*h) * s0
	a = 0
	for j, uj := range u {
		a += uj
		p := math.Exp(float64(j+1)*x + a - top)
		d := float64(j + 1 - h)
		s0 += p
		s1 += d * p
		s2 += d * d * p
	}
	dE = s1 / s0
	return h, dE, max(s2/s0-dE*dE, 0)
}

// longLogNorm is logNorm for a block of more than fastMaxSteps steps from its u_k.
func longLogNorm(u []float64, x float64) float64 {
	m := len(u)
	top, a := -float64(m)*x, 0.0
	for j, uj := range u {
		a += uj
		top = max(top, a-float64(m-j-1)*x)
	}
	s := math.Exp(-float64(m)*x - top)
	a = 0
	for j, uj := range u {
		a += uj
		s += math.Exp(a - float64(m-j-1)*x - top)
	}
	return top + math.Log(s)
}
