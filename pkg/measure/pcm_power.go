package measure

import "math"

// The multiplicative sums of the estimators (polyMeta.fast): at y = e^x category h of a block
// has the term t_h = c_h·y^h (t_0 = 1), the powers y^h formed once per evaluation for every
// block, so that a block of m steps costs m multiplications for its terms and one division.

// powerScore returns, at y = e^x, Σ w·h, Σ w·(E − h) and Σ w·V over the blocks of pp (held as
// coefficients), h being each block's category nearest its mean score E. E − h is a sum about h
// (each term at most m in size, so none rounds away), so E keeps its precision near 0 and near
// m; V is a sum about h too (powerScoreM), or for 2 and 3 steps Σ_{i<j} (j − i)²·t_i·t_j over
// s0², whose terms are all positive: either way it cannot cancel, and stays positive where one
// category holds nearly everything.
func (pp polyPart) powerScore(y float64) (points, frac, info float64) {
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		var p, f, v float64
		switch m {
		case 2:
			p, f, v = powerScore2(blocks, y, y*y)
		case 3:
			y2 := y * y
			p, f, v = powerScore3(blocks, y, y2, y2*y)
		default:
			p, f, v = powerScoreM(blocks, m, y)
		}
		points += p
		frac += f
		info += v
	}
	return points, frac, info
}

// powerScore2 is powerScore over blocks of 2 steps, y2 = y².
func powerScore2(blocks []float64, y, y2 float64) (points, frac, info float64) {
	for ; len(blocks) >= 3; blocks = blocks[3:] {
		b := blocks[:3:3]
		w := b[0]
		t1 := b[1] * y
		t2 := b[2] * y2
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

// powerScore3 is powerScore over blocks of 3 steps, y2 = y², y3 = y³.
func powerScore3(blocks []float64, y, y2, y3 float64) (points, frac, info float64) {
	for ; len(blocks) >= 4; blocks = blocks[4:] {
		b := blocks[:4:4]
		w := b[0]
		t1 := b[1] * y
		t2 := b[2] * y2
		t3 := b[3] * y3
		inv := 1 / (1 + t1 + t2 + t3)
		h := math.Floor((t1+2*t2+3*t3)*inv + 0.5)
		dE := (-h + (1-h)*t1 + (2-h)*t2 + (3-h)*t3) * inv
		// V·s0² = Σ_{i<j} (j − i)²·t_i·t_j, as in powerScore2.
		v := (t1*(1+t2+4*t3) + t2*(4+t3) + 9*t3) * inv * inv
		points += w * h
		frac += w * dE
		info += w * v
	}
	return points, frac, info
}

// plainInfo: where the information is at least plainInfo·M (M the blocks' maximum score), the
// score may take each block's E as Σ j·t_j/s0 (powerMean), its terms all positive but not
// formed about a category h: E is then within about 9e-16·m of the sum about h (a few roundings
// of numbers up to m), so the test's score within 9e-16·M, and a root or a Newton step moves by
// at most 9e-16·M/info <= 9e-14 logits. Below it (some block far from x, where a tail of E must
// keep its own precision, or too little information to absorb the rounding) powerScore sums
// about h.
const plainInfo = 0.01

// plainEnough reports whether a score with this information on blocks of this maximum score may
// take the blocks' E from powerMean.
func plainEnough(info, most float64) bool { return info >= plainInfo*most }

// powerMean returns, at y = e^x, Σ w·E and Σ w·V over the blocks of pp (held as coefficients),
// each E as Σ j·t_j/s0 and V as powerScore's (see plainInfo).
func (pp polyPart) powerMean(y float64) (sum, info float64) {
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		switch m {
		case 2:
			y2 := y * y
			for ; len(blocks) >= 3; blocks = blocks[3:] {
				b := blocks[:3:3]
				w := b[0]
				t1 := b[1] * y
				t2 := b[2] * y2
				inv := 1 / (1 + t1 + t2)
				sum += w * ((t1 + 2*t2) * inv)
				info += w * ((t1 + 4*t2 + t1*t2) * inv * inv)
			}
		case 3:
			y2 := y * y
			y3 := y2 * y
			for ; len(blocks) >= 4; blocks = blocks[4:] {
				b := blocks[:4:4]
				w := b[0]
				t1 := b[1] * y
				t2 := b[2] * y2
				t3 := b[3] * y3
				inv := 1 / (1 + t1 + t2 + t3)
				sum += w * ((t1 + 2*t2 + 3*t3) * inv)
				info += w * ((t1*(1+t2+4*t3) + t2*(4+t3) + 9*t3) * inv * inv)
			}
		default:
			p, f, v := powerScoreM(blocks, m, y)
			sum += p + f
			info += v
		}
	}
	return sum, info
}

// powerScoreM is powerScore over blocks of m <= fastMaxSteps steps: the terms are formed twice
// (a multiplication each) rather than stored.
func powerScoreM(blocks []float64, m int, y float64) (points, frac, info float64) {
	var pow [fastMaxSteps]float64
	yh := 1.0
	for h := range m {
		yh *= y
		pow[h] = yh
	}
	for ; len(blocks) >= 1+m; blocks = blocks[1+m:] {
		w, c := blocks[0], blocks[1:1+m]
		s0, s1 := 1.0, 0.0
		for h, ch := range c {
			t := ch * pow[h]
			s0 += t
			s1 += float64(h+1) * t
		}
		inv := 1 / s0
		h := math.Floor(s1*inv + 0.5)
		d1, d2 := -h, h*h // category 0, t_0 = 1
		for j, cj := range c {
			t := cj * pow[j]
			d := float64(j+1) - h
			d1 += d * t
			d2 += d * d * t
		}
		dE := d1 * inv
		points += w * h
		frac += w * dE
		info += w * max(d2*inv-dE*dE, 0)
	}
	return points, frac, info
}

// logNormPower is logNormPoly where the sums may be formed by multiplication: Σ w·log Σ_h t_h −
// M·x, the logs of unit blocks taken together as the log of a product, as logProduct does: two
// running products (so that each multiplication need not wait for the one before; unit blocks of
// 2 and 3 steps two at a time), a product above 2^500 moving its binary exponent into an integer
// count (every sum lies in [1, 2^495]: it holds t_0 = 1, and each term is at most e^340).
func (it *items) logNormPower(x float64) float64 {
	const fold = 0x1p500
	pp := it.poly
	y := math.Exp(x)
	y2 := y * y
	y3 := y2 * y
	sum := 0.0
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
				p0 *= 1 + b[1]*y + b[2]*y2
				p1 *= 1 + b[4]*y + b[5]*y2
			}
			if len(blocks) == 3 {
				if p0 > fold {
					p0, ex = mantissa(p0, ex)
				}
				p0 *= 1 + blocks[1]*y + blocks[2]*y2
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
				p0 *= 1 + b[1]*y + b[2]*y2 + b[3]*y3
				p1 *= 1 + b[5]*y + b[6]*y2 + b[7]*y3
			}
			if len(blocks) == 4 {
				if p0 > fold {
					p0, ex = mantissa(p0, ex)
				}
				p0 *= 1 + blocks[1]*y + blocks[2]*y2 + blocks[3]*y3
			}
			continue
		}
		var pow [fastMaxSteps]float64
		yh := 1.0
		for h := range m {
			yh *= y
			pow[h] = yh
		}
		for ; len(blocks) > m; blocks = blocks[1+m:] {
			w := blocks[0]
			norm := 1.0
			for h, c := range blocks[1 : 1+m] {
				norm += c * pow[h]
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
