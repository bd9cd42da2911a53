package measure

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// calibratePolytomous is Calibrate for the partial credit and rating scale models (§13). Item i
// is scored 0 … m_i, m_i its highest score in the data (RSM: the file's highest, for every item);
// an item that lacks a category is dropped and named (pruneScores).
func calibratePolytomous(ctx context.Context, resp *Responses, model string, opts CalibrateOptions) (*Calibration, error) {
	top := make([]int, len(resp.Items))
	high := 1
	for _, row := range resp.Cells {
		for i, x := range row {
			top[i] = max(top[i], int(x))
		}
	}
	for i := range top {
		top[i] = max(top[i], 1) // an item nobody scored above 0 is dropped as a 0/1 item would be
		high = max(high, top[i])
	}
	rsm := model == ModelRSM
	if rsm {
		for i := range top {
			top[i] = high
		}
	}
	d := pruneScores(resp, top, rsm)
	kept := d.keptItems()
	if len(kept) < 2 {
		return nil, fmt.Errorf("only %d of %d items can be estimated (%s); a calibration needs at least 2",
			len(kept), len(resp.Items), droppedSummary(d.dropped))
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	est := newPEstimation(d, kept, rsm)
	iters, err := est.newton(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	cov, err := est.thresholdCov()
	if err != nil {
		return nil, err
	}
	delta := est.delta(est.eta)
	stepSE := constrainedSE(cov, est.ermWeights())
	loc := est.locationCov(cov)
	infit, outfit, n := est.fit()
	m := len(kept)
	cal := &Calibration{Model: model, Dropped: d.dropped, Persons: est.persons, Iterations: iters, Cov: loc}
	for k, i := range kept {
		it := CalibratedItem{ID: resp.Items[i], Logit: est.location(delta, k), SE: math.Sqrt(loc[k*m+k]),
			Infit: infit[k], Outfit: outfit[k], N: n[k]}
		if est.top[k] == 1 {
			// A one-step item's location is its step: its SE is the step's, under eRm's
			// constraint like every other step of the calibration, not the locations' sum zero.
			it.SE = stepSE[est.off[k]]
		} else {
			for h := est.off[k]; h < est.off[k+1]; h++ {
				it.Steps = append(it.Steps, CalibratedStep{Logit: delta[h], SE: stepSE[h]})
			}
		}
		cal.Items = append(cal.Items, it)
	}
	return cal, nil
}

// pestimation is the partial credit (or rating scale) counterpart of estimation (§13): the
// sufficient statistics of the kept data and the current parameters. The thresholds δ of the
// kept items are laid out item after item: item k's steps 1 … top[k] at off[k] … off[k+1]−1.
//
// −(conditional log-likelihood) = Σ_ik δ_ik·S_ik + Σ_booklets Σ_r n_r log γ_r, S_ik the used
// persons with x_i ≥ k: convex in δ, with the gradient S − E[1[x_i ≥ k]] and the Hessian
// Σ_r n_r·Cov(1[x_i ≥ k], 1[x_j ≥ l] | r), whose null vector is 1 (a common shift of every
// threshold moves every person's score alike). The parameters η are the thresholds themselves
// (PCM) or one location per item and the m − 1 first steps τ of the common structure, τ_m being
// −(τ_1 + … + τ_{m−1}) (RSM: δ_ik = β_i + τ_k), so that δ = Wη.
type pestimation struct {
	d        *design
	kept     []int // response column of each compact item
	col      []int // compact index of each response column, −1 if dropped
	top      []int // m of each compact item
	off      []int // first threshold of each compact item; off[len(kept)] = P
	booklets []booklet
	of       []int // booklet of each person, −1 if not used
	score    []int // raw score of each used person on the kept items
	atLeast  []float64
	count    []float64 // used persons in each category h ≥ 1, at off[k] + h − 1
	persons  int
	rsm      bool
	eta      []float64
	work     pesfWork
	// exactNewton computes the exact information at every iteration (the reference path the
	// quasi-Newton one is tested against).
	exactNewton bool
	// blocks holds the same-item blocks of the information at the thresholds blocksAt, from the
	// last pass over every booklet: item k's m × m block at boff[k].
	blocks, blocksAt []float64
	boff             []int
}

func newPEstimation(d *design, kept []int, rsm bool) *pestimation {
	resp := d.resp
	n := len(kept)
	e := &pestimation{d: d, kept: kept, col: make([]int, len(resp.Items)), top: make([]int, n), off: make([]int, n+1),
		of: make([]int, len(resp.Cells)), score: make([]int, len(resp.Cells)), rsm: rsm}
	for i := range e.col {
		e.col[i] = -1
	}
	for k, i := range kept {
		e.col[i] = k
		e.top[k] = d.topOf(i)
		e.off[k+1] = e.off[k] + e.top[k]
	}
	size := e.off[n]
	e.atLeast = make([]float64, size)
	e.count = make([]float64, size)
	zeros := make([]float64, n)
	index := map[string]int{}
	key := make([]byte, (n+7)/8)
	for p, row := range resp.Cells {
		e.of[p] = -1
		if !d.keepPerson[p] {
			continue
		}
		clear(key)
		score := 0
		for i, x := range row {
			k := e.col[i]
			if x == Missing || k < 0 {
				continue
			}
			key[k/8] |= 1 << (k % 8)
			score += int(x)
			if x == 0 {
				zeros[k]++
				continue
			}
			e.count[e.off[k]+int(x)-1]++
			for s := 0; s < int(x); s++ {
				e.atLeast[e.off[k]+s]++
			}
		}
		b, ok := index[string(key)]
		if !ok {
			b = len(e.booklets)
			index[string(key)] = b
			var items []int
			most := 0
			for k := 0; k < n; k++ {
				if key[k/8]&(1<<(k%8)) != 0 {
					items = append(items, k)
					most += e.top[k]
				}
			}
			e.booklets = append(e.booklets, booklet{items: items, n: make([]float64, most+1)})
		}
		e.booklets[b].n[score]++
		e.of[p], e.score[p] = b, score
		e.persons++
	}
	// Start from the log-odds of adjacent categories (every category is observed, so they are
	// finite), centred; the conditional likelihood is convex, so any start converges.
	delta := make([]float64, size)
	for k := range n {
		below := zeros[k]
		for h := 1; h <= e.top[k]; h++ {
			at := e.count[e.off[k]+h-1]
			delta[e.off[k]+h-1] = math.Log(below / at)
			below = at
		}
	}
	e.centre(delta)
	if !rsm {
		e.eta = delta
		return e
	}
	m := e.top[0]
	e.eta = make([]float64, n+m-1)
	tau := make([]float64, m)
	for k := range n {
		e.eta[k] = e.location(delta, k)
		for h := range m {
			tau[h] += (delta[e.off[k]+h] - e.eta[k]) / float64(n)
		}
	}
	centre(tau)
	copy(e.eta[n:], tau[:m-1])
	return e
}

// location is item k's mean threshold.
func (e *pestimation) location(delta []float64, k int) float64 {
	s := 0.0
	for h := e.off[k]; h < e.off[k+1]; h++ {
		s += delta[h]
	}
	return s / float64(e.top[k])
}

// centre shifts every threshold so that the item locations sum to zero (the identification).
func (e *pestimation) centre(delta []float64) {
	c := 0.0
	for k := range e.kept {
		c += e.location(delta, k)
	}
	c /= float64(len(e.kept))
	for h := range delta {
		delta[h] -= c
	}
}

// centreEta applies the identification to the parameters: RSM locations are β_i itself (the
// steps τ sum to zero), so they are centred; PCM thresholds as centre.
func (e *pestimation) centreEta(eta []float64) {
	if e.rsm {
		centre(eta[:len(e.kept)])
		return
	}
	e.centre(eta)
}

// delta returns the thresholds of parameters eta.
func (e *pestimation) delta(eta []float64) []float64 {
	if !e.rsm {
		return eta
	}
	n := len(e.kept)
	m := e.top[0]
	delta := make([]float64, e.off[n])
	last := 0.0
	for h := 0; h < m-1; h++ {
		last -= eta[n+h]
	}
	for k := range n {
		for h := range m {
			tau := last
			if h < m-1 {
				tau = eta[n+h]
			}
			delta[e.off[k]+h] = eta[k] + tau
		}
	}
	return delta
}

// designMatrix returns W (P × Q, row-major) with δ = Wη, for RSM.
func (e *pestimation) designMatrix() []float64 {
	n, m := len(e.kept), e.top[0]
	q := n + m - 1
	w := make([]float64, e.off[n]*q)
	for k := range n {
		for h := range m {
			row := w[(e.off[k]+h)*q : (e.off[k]+h+1)*q]
			row[k] = 1
			if h < m-1 {
				row[n+h] = 1
			} else {
				for s := 0; s < m-1; s++ {
					row[n+s] = -1
				}
			}
		}
	}
	return w
}

// null is the null vector of the information in η: every threshold up by one.
func (e *pestimation) null() []float64 {
	v := make([]float64, len(e.eta))
	if !e.rsm {
		for h := range v {
			v[h] = 1
		}
		return v
	}
	for k := range e.kept {
		v[k] = 1
	}
	return v
}

// objective is −(conditional log-likelihood) at eta.
func (e *pestimation) objective(eta []float64) (float64, error) {
	delta := e.delta(eta)
	f := 0.0
	for h, s := range e.atLeast {
		f += s * delta[h]
	}
	e.work.steps.prepare(delta, e.top, e.off)
	defer e.work.steps.done()
	for b := range e.booklets {
		ll, err := e.work.loglik(&e.booklets[b], delta, e.top, e.off)
		if err != nil {
			return 0, err
		}
		f += ll
	}
	return f, nil
}

// factorAlong factors I + a·vvᵀ by Cholesky, a·|v|² = trace(I)/q (the mean diagonal), so that
// the added eigenvalue along v keeps the system well conditioned.
func factorAlong(ch *mat.Cholesky, info, v []float64) error {
	q := len(v)
	tr, vv := 0.0, 0.0
	for i := range q {
		tr += info[i*q+i]
		vv += v[i] * v[i]
	}
	a := tr / float64(q) / vv
	s := mat.NewSymDense(q, nil)
	for i := range q {
		for j := i; j < q; j++ {
			s.SetSym(i, j, 0.5*(info[i*q+j]+info[j*q+i])+a*v[i]*v[j])
		}
	}
	if ok := ch.Factorize(s); !ok {
		return errors.New("calibrate: the information matrix is singular beyond the common shift (the design does not determine the thresholds)")
	}
	return nil
}

// thresholdCov returns a covariance of the thresholds (P × P): W·(I + a·vvᵀ)⁻¹·Wᵀ, where
// (I + a·vvᵀ)⁻¹ is a generalised inverse of the information I in η. Another generalised
// inverse gives a matrix that differs only by terms along 1 = W·v (a common shift of every
// threshold), which the constraint projections below (constrainedSE, locationCov) remove.
func (e *pestimation) thresholdCov() ([]float64, error) {
	_, _, info, err := e.derivatives(context.Background(), e.eta, hessExact)
	if err != nil {
		return nil, err
	}
	var ch mat.Cholesky
	if err := factorAlong(&ch, info, e.null()); err != nil {
		return nil, err
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil, fmt.Errorf("calibrate: invert the information: %w", err)
	}
	if !e.rsm {
		q := len(e.eta)
		cov := make([]float64, q*q)
		for i := range q {
			for j := range q {
				cov[i*q+j] = inv.At(i, j)
			}
		}
		return cov, nil
	}
	p, q := e.off[len(e.kept)], len(e.eta)
	wd := mat.NewDense(p, q, e.designMatrix())
	var gw, c mat.Dense
	gw.Mul(&inv, wd.T())
	c.Mul(wd, &gw)
	return c.RawMatrix().Data, nil
}

// constrainedSE returns the standard errors of the thresholds under the constraint bᵀδ = 0:
// the square roots of the diagonal of P·C·Pᵀ, P = I − 1bᵀ/(bᵀ1).
func constrainedSE(cov, b []float64) []float64 {
	p := len(b)
	sb := 0.0
	for _, x := range b {
		sb += x
	}
	cb := make([]float64, p)
	bcb := 0.0
	for i := range p {
		for j := range p {
			cb[i] += cov[i*p+j] * b[j]
		}
		bcb += b[i] * cb[i]
	}
	se := make([]float64, p)
	for i := range p {
		se[i] = math.Sqrt(cov[i*p+i] - 2*cb[i]/sb + bcb/(sb*sb))
	}
	return se
}

// ermWeights is the b of eRm's own constraint on the thresholds (METHOD §13): eRm's sum0
// normalisation sets Σ betapar = 0, betapar_ih = −(δ_i1 + … + δ_ih), which is bᵀδ = 0 with
// b_ik = m_i − k + 1 for the partial credit model; for the rating scale model it fixes the
// first threshold's sum, b_ik = [k = 1].
func (e *pestimation) ermWeights() []float64 {
	b := make([]float64, e.off[len(e.kept)])
	for k := range e.kept {
		for h := 1; h <= e.top[k]; h++ {
			switch {
			case !e.rsm:
				b[e.off[k]+h-1] = float64(e.top[k] - h + 1)
			case h == 1:
				b[e.off[k]] = 1
			}
		}
	}
	return b
}

// locationCov returns the covariance of the item locations (n × n) under their own
// identification (sum zero): Q·A·C·Aᵀ·Q, A averaging each item's thresholds, Q = I − 11ᵀ/n.
func (e *pestimation) locationCov(cov []float64) []float64 {
	n, p := len(e.kept), e.off[len(e.kept)]
	// A·C (n × p), then (A·C)·Aᵀ (n × n).
	ac := make([]float64, n*p)
	for k := range n {
		for h := e.off[k]; h < e.off[k+1]; h++ {
			for j := range p {
				ac[k*p+j] += cov[h*p+j] / float64(e.top[k])
			}
		}
	}
	l := make([]float64, n*n)
	for k := range n {
		for j := range n {
			s := 0.0
			for h := e.off[j]; h < e.off[j+1]; h++ {
				s += ac[k*p+h]
			}
			l[k*n+j] = s / float64(e.top[j])
		}
	}
	row := make([]float64, n)
	all := 0.0
	for k := range n {
		for j := range n {
			row[k] += l[k*n+j] / float64(n)
		}
		all += row[k] / float64(n)
	}
	for k := range n {
		for j := range n {
			l[k*n+j] += all - row[k] - row[j]
		}
	}
	return l
}
