package measure

import "math"

// fitMoments measures the persons of one booklet for the item fit: the MLE of each raw score
// and every item's expected score and variance there. Item l's category weights at θ are
// ε'_lh·z^h with ε'_lh = exp(−Σ_{s≤h} (δ_ls − c)) taken once per booklet (c its mean threshold)
// and z = e^(θ−c) once per evaluation: one exp an evaluation instead of one per category.
// An item whose weights leave the range where that is exact (steps far from θ) is evaluated in
// log space by pcmMoments instead.
type fitMoments struct {
	steps [][]float64 // the booklet's items' thresholds
	eps   []float64   // ε'_lh at l·(width) + h
	width int         // the largest m + 1
	c     float64
	total int // the booklet's highest score, M
}

func (f *fitMoments) setup(b *booklet, delta []float64, top, off []int) {
	f.steps = f.steps[:0]
	f.width, f.total = 0, 0
	sum := 0.0
	for _, k := range b.items {
		st := delta[off[k] : off[k]+top[k]]
		f.steps = append(f.steps, st)
		f.width = max(f.width, top[k]+1)
		f.total += top[k]
		for _, d := range st {
			sum += d
		}
	}
	f.c = sum / float64(f.total)
	f.eps = resize(f.eps, len(b.items)*f.width)
	for l, st := range f.steps {
		e := f.eps[l*f.width:]
		e[0] = 1
		cum := 0.0
		for h, d := range st {
			cum += d - f.c
			e[h+1] = math.Exp(-cum)
		}
	}
}

// item returns item l's expected score and variance at θ = c + u (z = e^u).
func (f *fitMoments) item(l int, u, z float64) (ex, v float64) {
	st := f.steps[l]
	if len(st)+1 > 16 {
		ex, v, _ = pcmMoments(st, f.c+u)
		return ex, v
	}
	var buf [16]float64
	w := buf[:len(st)+1]
	e := f.eps[l*f.width:]
	s0, s1, zh := 0.0, 0.0, 1.0
	for h := range w {
		w[h] = e[h] * zh
		s0 += w[h]
		s1 += float64(h) * w[h]
		zh *= z
	}
	// Beyond these bounds a weight may have over- or underflowed (or lost precision as a
	// subnormal), which the log-space evaluation does not.
	if !(s0 > 1e-250 && s0 < 1e250) || !(w[0] == 0 || w[0] > 1e-250) {
		ex, v, _ = pcmMoments(st, f.c+u)
		return ex, v
	}
	ex = s1 / s0
	for h, p := range w {
		d := float64(h) - ex
		v += d * d * p
	}
	return ex, v / s0
}

// sums returns Σ_l E_l − r and Σ_l V_l at θ = c + u.
func (f *fitMoments) sums(u float64, r int) (g, info float64) {
	z := math.Exp(u)
	for l := range f.steps {
		ex, v := f.item(l, u, z)
		g += ex
		info += v
	}
	return g - float64(r), info
}

// mle returns u = θ − c of the raw score r, 0 < r < M: Newton's steps, no longer than 2 logits
// (the expected score is flat far from the steps), bisection once a root is bracketed and a
// step would leave the bracket, to 1e-12 logits as pcmLogitMLE, which takes over if this fails.
func (f *fitMoments) mle(r int) float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	u := math.Log(float64(r) / float64(f.total-r))
	for range 200 {
		g, info := f.sums(u, r)
		if g < 0 {
			lo = u
		} else {
			hi = u
		}
		next := u - math.Max(-2, math.Min(2, g/info))
		if math.Abs(next-u) < 1e-12 {
			return next
		}
		if !(next > lo && next < hi) {
			if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				break
			}
			next = 0.5 * (lo + hi)
		}
		u = next
	}
	return pcmLogitMLE(f.steps, r) - f.c
}

// at appends to dst E and V of every item (E at 2l, V at 2l + 1) at the MLE of the raw score r
// (at θ = 0 for 0 and M, which have none, as a person's extreme score would be taken).
func (f *fitMoments) at(dst []float64, r int) []float64 {
	u := -f.c
	if r > 0 && r < f.total {
		u = f.mle(r)
	}
	z := math.Exp(u)
	for l := range f.steps {
		ex, v := f.item(l, u, z)
		dst = append(dst, ex, v)
	}
	return dst
}
