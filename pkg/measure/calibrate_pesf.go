package measure

import (
	"fmt"
	"math"
)

// pesfWork is the scratch space of one booklet's evaluation under the partial credit model,
// reused across booklets. The booklet's items l = 0 … k−1 have m_l steps; item l contributes
// the polynomial f_l(z) = Σ_h ε'_lh z^h, ε'_lh = exp(−Σ_{s≤h} (δ_ls − c)) (ε'_l0 = 1), c the
// mean threshold of the booklet, and the elementary symmetric functions γ'_r are the coefficients
// of Π f_l: γ'_0 = γ'_M = 1, every γ'_r > 0, and γ_r = γ'_r·e^(−rc). A person's raw score r
// is sufficient for θ, so P(x | r) = Π ε_{l,x_l} / γ_r.
type pesfWork struct {
	deg    []int       // deg[l] = D_l = m_0 + … + m_{l−1}; deg[k] = M, the booklet's maximum score
	lim    int         // the highest score present: no product is kept above that degree
	steps  stepCache   // the thresholds' exponentials for a pass over every booklet
	blocks []float64   // if not nil, each booklet's same-item blocks of the information are added (addBlocks)
	boff   []int       // item i's m × m block at blocks[boff[i]:]
	eps    [][]float64 // eps[l][h] = ε'_lh
	prefix [][]float64 // prefix[l]: coefficients of f_0 ⋯ f_{l−1} (degree D_l)
	suffix [][]float64 // suffix[l]: coefficients of f_l ⋯ f_{k−1} (degree M − D_l)
	scores []int       // the raw scores r with n_r > 0
	p      []float64   // p[ri·M + D_l + h − 1] = P(x_l = h | r = scores[ri])
	e      []float64   // Σ_r n_r P(x_l = h | r), at D_l + h − 1
	h      []float64   // the booklet's M × M block of the information in category indicators
	c      []float64   // c_s = n_s/γ'_s: the functional L(p) = Σ_s c_s p_s
	u      []float64
	alpha  [][]float64
	q, w   []float64
}

// setup fills deg, eps (centred on the booklet's mean threshold c, returned) and the prefix and
// suffix products for the booklet's items at thresholds delta.
func (w *pesfWork) setup(b *booklet, delta []float64, top, off []int) float64 {
	c := w.setupPrefix(b, delta, top, off)
	k := len(b.items)
	total := w.deg[k]
	w.suffix[k] = resize(w.suffix[k], 1)
	w.suffix[k][0] = 1
	for l := k - 1; l >= 0; l-- {
		w.suffix[l] = multiply(w.suffix[l], w.suffix[l+1][:min(total-w.deg[l+1], w.lim)+1], w.eps[l][:w.deg[l+1]-w.deg[l]+1], w.lim)
	}
	return c
}

// setupPrefix is setup without the suffix products, all that the likelihood alone needs.
func (w *pesfWork) setupPrefix(b *booklet, delta []float64, top, off []int) float64 {
	k := len(b.items)
	w.lim = len(b.n) - 1
	for w.lim > 0 && b.n[w.lim] == 0 {
		w.lim--
	}
	w.deg = resize(w.deg, k+1)
	w.deg[0] = 0
	sum := 0.0
	cached := w.steps.valid
	for l, i := range b.items {
		w.deg[l+1] = w.deg[l] + top[i]
		if w.steps.valid {
			sum += w.steps.sum[i]
			cached = cached && w.steps.ok[i]
			continue
		}
		for s := 0; s < top[i]; s++ {
			sum += delta[off[i]+s]
		}
	}
	total := w.deg[k]
	c := sum / float64(total)
	if len(w.eps) < k {
		w.eps = make([][]float64, k)
	}
	if !cached || !w.steps.fill(w.eps[:k], b.items, top, off, c) {
		for l, i := range b.items {
			m := top[i]
			w.eps[l] = resize(w.eps[l], m+1)
			w.eps[l][0] = 1
			cum := 0.0
			for h := 1; h <= m; h++ {
				cum += delta[off[i]+h-1] - c
				w.eps[l][h] = math.Exp(-cum)
			}
		}
	}
	if len(w.prefix) < k+1 {
		w.prefix = make([][]float64, k+1)
		w.suffix = make([][]float64, k+1)
	}
	w.prefix[0] = resize(w.prefix[0], 1)
	w.prefix[0][0] = 1
	for l := 0; l < k; l++ {
		w.prefix[l+1] = multiply(w.prefix[l+1], w.prefix[l][:min(w.deg[l], w.lim)+1], w.eps[l][:w.deg[l+1]-w.deg[l]+1], w.lim)
	}
	return c
}

// loglik returns Σ_r n_r log γ_r of booklet b at thresholds delta: the booklet's part of
// −(conditional log-likelihood) beyond Σ δ_ik·S_ik.
func (w *pesfWork) loglik(b *booklet, delta []float64, top, off []int) (float64, error) {
	c := w.setupPrefix(b, delta, top, off)
	k := len(b.items)
	g := w.prefix[k]
	sum := 0.0
	for r, n := range b.n {
		if n > 0 {
			sum += n * (math.Log(g[r]) - float64(r)*c)
		}
	}
	if !finite(sum) {
		return 0, w.overflow(k)
	}
	return sum, nil
}

// accumulate adds booklet b's part of the expected category counts (e, at off[i] + h − 1 for
// item i's category h ≥ 1) and of the upper triangle of the information in the category
// indicators 1[x_i = h] (info, P × P row-major: Σ_r n_r·Cov(1[x_i = h], 1[x_j = l] | r); the
// caller mirrors it once all booklets are in, mirrorUpper) at thresholds delta, and
// returns its part of Σ_r n_r log γ_r. With info nil only the expected counts are added: the
// information's joint terms are most of the work, and a chord Newton step does without them.
//
// With Γ^(l) the ESFs without item l and Γ^(l,j) without l and j,
// P(x_l = h | r) = ε'_lh·Γ^(l)_{r−h}/γ'_r and P(x_l = h, x_j = g | r) = ε'_lh·ε'_jg·Γ^(l,j)_{r−h−g}/γ'_r.
// Γ^(l) is prefix[l]·suffix[l+1]; the joint terms, summed over r with weights n_r, are the
// functional L(p) = Σ_s (n_s/γ'_s)·p_s applied to z^(h+g)·prefix[l]·(f_{l+1} ⋯ f_{j−1})·suffix[j+1],
// obtained for all pairs at once by carrying L's weights backwards through the products (an
// adjoint pass). Every quantity is a sum of products of positive numbers: nothing cancels but
// the covariance's own P(joint) − P·P.
func (w *pesfWork) accumulate(b *booklet, delta []float64, top, off []int, e, info []float64, size int) (float64, error) {
	c := w.setup(b, delta, top, off)
	k := len(b.items)
	total := w.deg[k]
	g := w.prefix[k]
	ll := 0.0
	w.scores = w.scores[:0]
	for r, n := range b.n {
		if n > 0 {
			ll += n * (math.Log(g[r]) - float64(r)*c)
			w.scores = append(w.scores, r)
		}
	}
	if !finite(ll) {
		return 0, w.overflow(k)
	}
	// P(x_l = h | r) for the scores present.
	w.p = resize(w.p, len(w.scores)*total)
	for ri, r := range w.scores {
		row := w.p[ri*total : (ri+1)*total]
		inv := 1 / g[r]
		for l := 0; l < k; l++ {
			pre, suf := w.prefix[l][:min(w.deg[l], w.lim)+1], w.suffix[l+1][:min(total-w.deg[l+1], w.lim)+1]
			m := w.deg[l+1] - w.deg[l]
			// Γ^(l)_{r−h} for h = m … 1: the coefficients r − m … r − 1 of pre·suf.
			var buf [3]float64
			gam := buf[:]
			if m > len(buf) {
				gam = make([]float64, m)
			}
			window(gam[:m], pre, suf, r-m)
			for h := 1; h <= m; h++ {
				row[w.deg[l]+h-1] = w.eps[l][h] * gam[m-h] * inv
			}
		}
	}
	w.e = resize(w.e, total)
	clear(w.e)
	if w.blocks != nil {
		w.addBlocks(b, top)
	}
	if info == nil {
		for ri, r := range w.scores {
			n := b.n[r]
			for a, pa := range w.p[ri*total : (ri+1)*total] {
				w.e[a] += n * pa
			}
		}
		for l, i := range b.items {
			for h := 1; h <= top[i]; h++ {
				e[off[i]+h-1] += w.e[w.deg[l]+h-1]
			}
		}
		return ll, nil
	}
	// Expected counts and −Σ_r n_r p pᵀ + diag(E): the whole block but the joint terms of
	// different items (those of one item are 0: an item has one score).
	w.h = resize(w.h, total*total)
	clear(w.h)
	for ri, r := range w.scores {
		n := b.n[r]
		row := w.p[ri*total : (ri+1)*total]
		for a, pa := range row {
			if pa == 0 {
				continue
			}
			w.e[a] += n * pa
			np := n * pa
			ha := w.h[a*total : (a+1)*total]
			for bb := a; bb < total; bb++ {
				ha[bb] -= np * row[bb]
			}
		}
	}
	for a := range total {
		w.h[a*total+a] += w.e[a]
	}
	w.joint(b, total)
	// Scatter the upper triangle to the item bank's indices: the booklet's items are in the
	// bank's order, so it lands in the upper triangle there, an item's steps contiguous.
	for l, i := range b.items {
		for h := 1; h <= top[i]; h++ {
			a := w.deg[l] + h - 1
			ga := off[i] + h - 1
			e[ga] += w.e[a]
			src, dst := w.h[a*total:(a+1)*total], info[ga*size:(ga+1)*size]
			for j := l; j < k; j++ {
				gj := b.items[j]
				first := 1
				if j == l {
					first = h
				}
				seg := src[w.deg[j]+first-1 : w.deg[j+1]]
				for x, v := range seg {
					dst[off[gj]+first-1+x] += v
				}
			}
		}
	}
	return ll, nil
}

func (w *pesfWork) overflow(k int) error {
	return fmt.Errorf("the symmetric functions of a booklet of %d items overflow: its thresholds are too far apart for one booklet", k)
}
