package measure

import "math"

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
// steps (logits). The blocks are filled with their a_h, then, if every a_h lies within
// e^±fastReach and no block has more than fastMaxSteps steps, each a_h is replaced by c_h =
// e^(a_h) in one pass of its own (one exp per step, with nothing else in the loop to wait for).
// (Nothing is stored through a pointer, so that the caller's buffer for pp can stay on its
// stack.)
func (p *prepared) preparePoly(centre float64, t Test, pp polyPart, pc *polyCounts) (polyMeta, float64) {
	meta := polyMeta{unit: !pc.notUnit, most: pc.most}
	sum, reach, top := p.fillPoly(centre, t, pp, pc.count)
	meta.reach, meta.top = reach, top
	// Beyond fastReach the multiplicative sums are never used (polyMeta.fast): the a_h stay.
	meta.logs = top > fastMaxSteps || !(reach <= fastReach)
	if !meta.logs {
		pp.toCoefficients()
	}
	return meta, sum
}

// fillPoly is preparePoly's filling with the a_h: it returns the count-weighted sum of the δ_k,
// the largest |a_h| and the largest number of steps.
func (p *prepared) fillPoly(centre float64, t Test, pp polyPart, count [fastMaxSteps + 2]int) (sum, reach float64, top int) {
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
			var acc float64
			acc, reach = p.fillBlock(centre, d.Steps, pp[i:i+len(d.Steps)], reach)
			sum += float64(d.Count) * acc
			i += len(d.Steps)
			top = max(top, len(d.Steps))
		}
	}
	return sum, reach, top
}

// fillBlock writes one block's a_h = u_1 + … + u_h (u_k = λ − δ_k) into vals and returns the sum
// of its δ_k and reach widened by the |a_h|.
func (p *prepared) fillBlock(centre float64, steps, vals []float64, reach float64) (float64, float64) {
	vals = vals[:len(steps)]
	acc, a := 0.0, 0.0
	for k, step := range steps {
		delta := (step - centre) * p.invS
		acc += delta
		a += p.lambda - delta
		vals[k] = a
		reach = max(reach, math.Abs(a))
	}
	return acc, reach
}

// toCoefficients replaces every a_h of pp by e^(a_h); the caller has seen that |a_h| <=
// fastReach, inside stepExp's range.
func (pp polyPart) toCoefficients() {
	for i := 0; i < len(pp); {
		m, blocks, next := pp.group(i)
		i = next
		for ; len(blocks) > m; blocks = blocks[1+m:] {
			a := blocks[1 : 1+m : 1+m]
			for h, v := range a {
				a[h] = stepExp(v)
			}
		}
	}
}
