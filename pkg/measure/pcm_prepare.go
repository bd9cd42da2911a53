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
// steps (logits). The blocks are filled with their c_h = e^(a_h) as the a_h are formed (one exp
// per step); if some |a_h| turns out to be beyond fastReach they are filled again with the a_h,
// at once when a block has more than fastMaxSteps steps. (Nothing is stored through a pointer, so
// that the caller's buffer for pp can stay on its stack.)
func (p *prepared) preparePoly(centre float64, t Test, pp polyPart, pc *polyCounts) (polyMeta, float64) {
	meta := polyMeta{unit: !pc.notUnit, most: pc.most}
	long := pc.count[fastMaxSteps+1] > 0
	sum, reach, top := p.fillPoly(centre, t, pp, pc.count, long)
	meta.reach, meta.top = reach, top
	// Beyond fastReach the multiplicative sums are never used (polyMeta.fast), and an a_h may be
	// beyond stepExp's range: the a_h are kept instead.
	meta.logs = long || !(reach <= fastReach)
	if meta.logs && !long {
		p.fillPoly(centre, t, pp, pc.count, true)
	}
	return meta, sum
}

// fillPoly is one filling of preparePoly, with the c_h or with logs the a_h = u_1 + … + u_h
// (u_k = λ − δ_k): it returns the count-weighted sum of the δ_k, the largest |a_h| and the
// largest number of steps.
func (p *prepared) fillPoly(centre float64, t Test, pp polyPart, count [fastMaxSteps + 2]int, logs bool) (sum, reach float64, top int) {
	invS, lambda := p.invS, p.lambda
	i := 0
	for m := 2; m <= fastMaxSteps+1; m++ {
		if count[m] == 0 {
			continue
		}
		for j := range t.Items {
			d := &t.Items[j]
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
			steps := d.Steps
			pp[i] = float64(d.Count)
			vals := pp[i+1 : i+1+len(steps) : i+1+len(steps)]
			vals = vals[:len(steps)] // so that vals[k] below needs no bounds check
			acc, a := 0.0, 0.0
			for k, step := range steps {
				delta := (step - centre) * invS
				acc += delta
				a += lambda - delta
				if r := math.Abs(a); r > reach {
					reach = r
				}
				if logs {
					vals[k] = a
				} else {
					vals[k] = stepExp(a) // beyond its range only if the a_h are filled in again
				}
			}
			sum += float64(d.Count) * acc
			i += 1 + len(steps)
			top = max(top, len(steps))
		}
	}
	return sum, reach, top
}
