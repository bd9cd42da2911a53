package measure

import "math"

// fit returns each kept item's infit and outfit mean squares and its count of used persons.
// Each used person (neither zero nor perfect on the kept items) is measured by MLE on the items
// they answered; persons of one booklet with one raw score share that MLE, so it is computed
// once per (booklet, score). The mean squares are the person fit's formulas (fitSums) summed
// over an item's persons instead of a person's items.
func (e *estimation) fit() (infit, outfit []float64, n []int) {
	m := len(e.beta)
	infit, outfit, n = make([]float64, m), make([]float64, m), make([]int, m)
	sums := make([]fitSums, m)
	theta := make([][]float64, len(e.booklets))
	for b := range e.booklets {
		bk := &e.booklets[b]
		theta[b] = make([]float64, len(bk.items)+1)
		betas := make([]float64, len(bk.items))
		for l, k := range bk.items {
			betas[l] = e.beta[k]
		}
		for r := 1; r < len(bk.items); r++ {
			if bk.n[r] > 0 {
				theta[b][r] = logitMLE(betas, r)
			}
		}
	}
	for p, row := range e.d.resp.Cells {
		b := e.of[p]
		if b < 0 {
			continue
		}
		th := theta[b][e.score[p]]
		for i, x := range row {
			k := e.col[i]
			if x == Missing || k < 0 {
				continue
			}
			sums[k].add(x == 1, math.Exp(e.beta[k]-th))
		}
	}
	for k := range sums {
		infit[k], outfit[k] = sums[k].meanSquares()
		n[k] = int(sums[k].n)
	}
	return infit, outfit, n
}

// logitMLE solves Σ 1/(1 + e^(β_i − θ)) = r for 0 < r < len(betas): Newton safeguarded by the
// bracket [min β + logit(r/k), max β + logit(r/k)] (every P_i lies between those of the hardest
// and the easiest item), to 1e-12 logits.
func logitMLE(betas []float64, r int) float64 {
	k := float64(len(betas))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, b := range betas {
		lo, hi = math.Min(lo, b), math.Max(hi, b)
	}
	odds := math.Log(float64(r) / (k - float64(r)))
	lo, hi = lo+odds, hi+odds
	th := 0.5 * (lo + hi)
	for iter := 0; iter < 200; iter++ {
		sum, info := 0.0, 0.0
		for _, b := range betas {
			p := 1 / (1 + math.Exp(b-th))
			sum += p
			info += p * (1 - p)
		}
		f := sum - float64(r)
		if f < 0 {
			lo = th
		} else {
			hi = th
		}
		next := th - f/info
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
