package measure

import (
	"errors"
	"fmt"
	"math"
)

// maxSpreadLogits bounds the spread of a test's difficulties. Inside it every exp() of the
// estimators stays finite (e^±400 < e^709); beyond it the test is not a test of one ability.
const maxSpreadLogits = 400

// stackItems is how many distinct difficulties the estimators keep on the stack.
const stackItems = 128

// items is a test prepared for the estimators, in logits relative to a centre c (measure units):
// item i has δ_i = (d_i − c)/s and k_i = exp(δ_i − λ), so P_i(x) = 1/(1 + e^(−x)·k_i) costs one
// exp per ability x and one division per distinct difficulty.
type items struct {
	k, w        []float64 // k_i and the count of items at that difficulty
	unit        bool      // every count is 1 (lets the log-likelihood multiply instead of log)
	n, r        float64   // number of items and raw score
	centre      float64   // c, measure units
	dmin, dmax  float64   // min and max δ_i
	mean, reach float64   // count-weighted mean δ_i; max |δ_i| + |λ|
	lambda, s   float64
	poly        polyPart // the polytomous items (METHOD §13); nil when every item is dichotomous
	pmeta       polyMeta
}

// prepare validates t and fills it into buf (2 floats a dichotomous block and 2 + m a polytomous
// one of m steps; one allocation if buf is too short).
func (p *prepared) prepare(t Test, buf []float64) (items, error) {
	var it items
	m := len(t.Items)
	if m == 0 {
		return it, errors.New("test has no items")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	poly := 0 // blocks with two or more steps
	var pc polyCounts
	for i, d := range t.Items {
		if len(d.Steps) >= 2 {
			blo, bhi, bad := stepRange(d.Steps)
			// Count·m beyond 2^31 − 1 − n, without a division: a Count held below 2^31 first
			// keeps the product from overflowing.
			if bad || d.Count < 1 || d.Count > math.MaxInt32 || uint64(d.Count)*uint64(len(d.Steps)) > uint64(math.MaxInt32-n) {
				return it, stepsError(i, d)
			}
			lo, hi = min(lo, blo), max(hi, bhi)
			n += d.Count * len(d.Steps)
			poly++
			pc.add(d)
			continue
		}
		measure := d.Measure
		if len(d.Steps) == 1 {
			measure = d.Steps[0]
		}
		if !finite(measure) {
			return it, fmt.Errorf("item %d: difficulty %v is not finite", i, measure)
		}
		if d.Count < 1 {
			return it, fmt.Errorf("item %d: count %d is below 1", i, d.Count)
		}
		if d.Count > math.MaxInt32-n {
			return it, errors.New("test has more than 2^31 items")
		}
		n += d.Count
		lo = math.Min(lo, measure)
		hi = math.Max(hi, measure)
	}
	if t.Correct < 0 || t.Correct > n {
		return it, fmt.Errorf("raw score %d is outside [0, %d]", t.Correct, n)
	}
	if (hi-lo)*p.invS > maxSpreadLogits {
		return it, fmt.Errorf("difficulties span %v units (%.0f logits); at most %d logits can be scored",
			hi-lo, (hi-lo)*p.invS, maxSpreadLogits)
	}
	m -= poly
	size := pc.size
	if cap(buf) < 2*m+size {
		buf = make([]float64, 2*m+size)
	}
	it.k, it.w = buf[:m], buf[m:2*m]
	it.centre = lo + (hi-lo)/2
	it.dmin, it.dmax = (lo-it.centre)*p.invS, (hi-it.centre)*p.invS
	it.unit = true
	sum := 0.0
	if poly > 0 {
		it.poly = polyPart(buf[2*m : 2*m+size])
		it.pmeta, sum = p.preparePoly(it.centre, t, it.poly, &pc)
	}
	dich := t.Items
	if m == 0 { // every block polytomous: none to fill
		dich = nil
	}
	i := 0
	for _, d := range dich {
		measure := d.Measure
		switch len(d.Steps) {
		case 0:
		case 1:
			measure = d.Steps[0]
		default:
			continue
		}
		delta := (measure - it.centre) * p.invS
		it.k[i] = math.Exp(delta - p.lambda)
		it.w[i] = float64(d.Count)
		it.unit = it.unit && d.Count == 1
		sum += it.w[i] * delta
		i++
	}
	it.n, it.r = float64(n), float64(t.Correct)
	it.mean = sum / it.n
	it.reach = math.Max(-it.dmin, it.dmax) + math.Abs(p.lambda)
	it.lambda, it.s = p.lambda, p.s
	return it, nil
}

// score returns Σ w_i·P_i(x) − r and the information Σ w_i·P_i(1 − P_i) at x (logits), both
// without cancellation: items with P_i >= ½ contribute their count less w_i·(1 − P_i), with
// 1 − P_i = e^(−x)·k_i·P_i computed directly, and the counts (integers, exact) meet r first.
// Far from the items, where P_i rounds to 0 or 1, the excess then keeps the tails that decide
// where it changes sign, and the information stays positive.
func (it *items) score(x, r float64) (excess, info float64) {
	if it.poly != nil {
		return it.scorePoly(x, r)
	}
	e := math.Exp(-x)
	var low, high, count float64
	for i, k := range it.k {
		ek := e * k
		q := 1 / (1 + ek)
		w := it.w[i]
		var c float64 // 1 − q
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
	return (count - r) + (low - high), info
}

// Standard is §2's estimate without a prior: the maximum-likelihood ability solving Σ P_i(θ) = r
// by safeguarded Newton to |Δθ| < 1e-8 logits, with a zero or perfect raw score replaced by
// ExtremeAdjust or n − ExtremeAdjust; uncertainty = s/√(Σ P_i(1 − P_i)) at θ̂.
func (f *Framework) Standard(t Test) (Estimate, error) {
	p, err := f.prepared()
	if err != nil {
		return Estimate{}, err
	}
	var buf [2 * stackItems]float64
	it, err := p.prepare(t, buf[:])
	if err != nil {
		return Estimate{}, fmt.Errorf("standard estimate: %w", err)
	}
	r := it.r
	switch r {
	case 0:
		r = f.ExtremeAdjust
	case it.n:
		r = it.n - f.ExtremeAdjust
	}
	var x float64
	if it.poly != nil {
		x = it.mlePoly(r)
	} else {
		x = it.mle(r)
	}
	_, info := it.score(x, r)
	return Estimate{Ability: it.centre + p.s*x, Uncertainty: p.s / math.Sqrt(info)}, nil
}

// mle solves Σ w_i·P_i(x) = r for 0 < r < n. The root is bracketed by the abilities at which
// the easiest and the hardest item alone would give the proportion r/n. Within the bracket the
// search is Newton safeguarded as in mode: a Newton step is taken only if it lands strictly
// inside the bracket and is at most half as long as the step before the previous one, otherwise
// the step bisects the bracket, so flat stretches of the score (items in far-apart clusters)
// cannot make it wander.
func (it *items) mle(r float64) float64 {
	logit := math.Log(r / (it.n - r))
	lo, hi := it.dmin-it.lambda+logit, it.dmax-it.lambda+logit
	x := it.mean - it.lambda + logit
	if !(x > lo && x < hi) {
		x = 0.5 * (lo + hi)
	}
	return it.newton(lo, hi, x, r)
}

// newton is mle's search for the root of the score from x inside the bracket [lo, hi].
func (it *items) newton(lo, hi, x, r float64) float64 {
	g, info := it.score(x, r)
	return it.newtonFrom(lo, hi, x, r, g, info)
}

// newtonFrom is newton from x, where the score is g and the information info, in or at an end
// of the bracket [lo, hi].
func (it *items) newtonFrom(lo, hi, x, r, g, info float64) float64 {
	last, before := hi-lo, math.Inf(1)
	for iter := 0; iter < maxModeIter; iter++ {
		if iter > 0 {
			g, info = it.score(x, r)
		}
		switch {
		case g < 0:
			lo = x
		case g > 0:
			hi = x
		default:
			return x
		}
		newton := -g / info
		if math.Abs(newton) < 1e-8 { // converged: the step left is below the tolerance
			return x + newton
		}
		next := x + newton
		if !(next > lo && next < hi) || math.Abs(newton) > 0.5*before { // also a NaN step
			next = lo + 0.5*(hi-lo)
		}
		step := math.Abs(next - x)
		before, last = last, step
		x = next
		if hi-lo < 1e-12 {
			break
		}
	}
	return x
}

// stepRange returns the least and the greatest of steps (at least one), and whether some step is
// not finite (s − s is 0 for a finite s and NaN otherwise, so one sum tells).
func stepRange(steps []float64) (lo, hi float64, bad bool) {
	lo, hi = steps[0], steps[0]
	z := 0.0
	for _, s := range steps {
		z += s - s
		if s < lo {
			lo = s
		}
		if s > hi {
			hi = s
		}
	}
	return lo, hi, z != 0
}

// stepsError is the error of block i of a test, a polytomous one that stepRange or its count
// refused: its first step that is not finite, a count below 1, or a total score of 2^31 or more.
func stepsError(i int, d Difficulty) error {
	for k, step := range d.Steps {
		if !finite(step) {
			return fmt.Errorf("item %d: step %d: difficulty %v is not finite", i, k+1, step)
		}
	}
	if d.Count < 1 {
		return fmt.Errorf("item %d: count %d is below 1", i, d.Count)
	}
	return errors.New("test has a maximum score above 2^31")
}
