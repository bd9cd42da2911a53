package measure

import "math"

// fit returns each kept item's infit and outfit mean squares and its count of used persons under
// the partial credit model, as estimation.fit does for 0/1 items: each used person is measured
// by MLE on the items they answered (once per booklet and raw score), and with E and V the
// expected score and its variance at that θ, outfit = mean of (x − E)²/V and infit =
// Σ (x − E)²/Σ V over the item's persons (Wright and Masters 1982; eRm's itemfit).
func (e *pestimation) fit() (infit, outfit []float64, n []int) {
	size := len(e.kept)
	delta := e.delta(e.eta)
	// moments[b][ri·2k + 2l], [… + 1]: E and V of the booklet's item l at the θ of its ri-th
	// raw score (in the order of bk.n); slot[b][r] is ri.
	moments := make([][]float64, len(e.booklets))
	slot := make([][]int, len(e.booklets))
	var fm fitMoments
	for b := range e.booklets {
		bk := &e.booklets[b]
		fm.setup(bk, delta, e.top, e.off)
		slot[b] = make([]int, len(bk.n))
		for r, c := range bk.n {
			if c > 0 {
				slot[b][r] = len(moments[b]) / (2 * len(bk.items))
				moments[b] = fm.at(moments[b], r)
			}
		}
	}
	sq, w, std := make([]float64, size), make([]float64, size), make([]float64, size)
	n = make([]int, size)
	for p, row := range e.d.resp.Cells {
		b := e.of[p]
		if b < 0 {
			continue
		}
		bk := &e.booklets[b]
		mom := moments[b][slot[b][e.score[p]]*2*len(bk.items):]
		for l, k := range bk.items {
			ex, v := mom[2*l], mom[2*l+1]
			d := float64(row[e.kept[k]]) - ex
			sq[k] += d * d
			w[k] += v
			std[k] += d * d / v
			n[k]++
		}
	}
	infit, outfit = make([]float64, size), make([]float64, size)
	for k := range size {
		infit[k], outfit[k] = sq[k]/w[k], std[k]/float64(n[k])
	}
	return infit, outfit, n
}

// pcmMoments returns the expected score E and its variance V of an item with thresholds steps
// (logits) at θ, and the log of the normaliser. The category weights are taken in log space,
// relative to the largest, so that a step far from θ neither overflows nor loses the small
// categories.
func pcmMoments(steps []float64, theta float64) (ex, v, logNorm float64) {
	var buf [16]float64
	z := buf[:0]
	if len(steps)+1 > len(buf) {
		z = make([]float64, 0, len(steps)+1)
	}
	cum, top := 0.0, 0.0
	z = append(z, 0)
	for _, d := range steps {
		cum += theta - d
		z = append(z, cum)
		top = math.Max(top, cum)
	}
	sum, s1 := 0.0, 0.0
	for x, l := range z {
		p := math.Exp(l - top)
		z[x] = p
		sum += p
		s1 += float64(x) * p
	}
	ex = s1 / sum
	for x, p := range z {
		d := float64(x) - ex
		v += d * d * p
	}
	return ex, v / sum, top + math.Log(sum)
}

// pcmLogitMLE solves Σ E_i(θ) = r for 0 < r < Σ m_i (items given by their thresholds, logits):
// Newton safeguarded by a bracket, which is found by doubling out from the mean threshold (the
// expected score rises from 0 to Σ m_i), to 1e-12 logits.
func pcmLogitMLE(items [][]float64, r int) float64 {
	f := func(th float64) (float64, float64) {
		sum, info := 0.0, 0.0
		for _, steps := range items {
			ex, v, _ := pcmMoments(steps, th)
			sum += ex
			info += v
		}
		return sum - float64(r), info
	}
	mean, n := 0.0, 0
	for _, steps := range items {
		for _, d := range steps {
			mean += d
			n++
		}
	}
	mean /= float64(n)
	lo, hi := mean-1, mean+1
	for width := 2.0; ; width *= 2 {
		flo, _ := f(lo)
		fhi, _ := f(hi)
		if flo < 0 && fhi > 0 || width > 1e6 {
			break
		}
		if flo >= 0 {
			lo -= width
		}
		if fhi <= 0 {
			hi += width
		}
	}
	th := 0.5 * (lo + hi)
	for iter := 0; iter < 200; iter++ {
		g, info := f(th)
		if g < 0 {
			lo = th
		} else {
			hi = th
		}
		next := th - g/info
		if !(next > lo && next < hi) {
			next = 0.5 * (lo + hi)
		}
		if math.Abs(next-th) < 1e-12 {
			return next
		}
		th = next
	}
	return th
}
