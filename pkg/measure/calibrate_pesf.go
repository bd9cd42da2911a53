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

// multiply sets dst (grown as needed) to the product of the polynomials a and b up to degree
// lim, b the shorter (an item's: its coefficients are held in registers for the entries that
// take all of them, and for three steps at the ends too).
func multiply(dst, a, b []float64, lim int) []float64 {
	n := min(len(a)+len(b)-1, lim+1)
	dst = resize(dst, n)
	m := len(b) - 1
	if m == 3 && len(a) >= 3 {
		return multiply3(dst, a, b)
	}
	for t := 0; t < min(m, n); t++ {
		dst[t] = convAt(a, b, t)
	}
	if m < min(len(a), n) {
		mid := dst[m:min(len(a), n)]
		switch m {
		case 1:
			a0, a1 := a[1:], a[:len(a)-1]
			b0, b1 := b[0], b[1]
			for t := range mid {
				mid[t] = b0*a0[t] + b1*a1[t]
			}
		case 2:
			a0, a1, a2 := a[2:], a[1:len(a)-1], a[:len(a)-2]
			b0, b1, b2 := b[0], b[1], b[2]
			for t := range mid {
				mid[t] = b0*a0[t] + b1*a1[t] + b2*a2[t]
			}
		default:
			for t := m; t < min(len(a), n); t++ {
				dst[t] = convAt(a, b, t)
			}
		}
	}
	for t := max(m, len(a)); t < n; t++ {
		dst[t] = convAt(a, b, t)
	}
	return dst
}

// multiply3 is multiply for b of degree 3 and a of 3 coefficients or more, dst already sized.
func multiply3(dst, a, b []float64) []float64 {
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	n, la := len(dst), len(a)
	dst[0] = b0 * a[0]
	if n > 1 {
		dst[1] = b0*a[1] + b1*a[0]
	}
	if n > 2 {
		dst[2] = b0*a[2] + b1*a[1] + b2*a[0]
	}
	if n > 3 {
		mid := dst[3:min(la, n)]
		a0, a1, a2, a3 := a[3:], a[2:la-1], a[1:la-2], a[:la-3]
		for t := range mid {
			mid[t] = b0*a0[t] + b1*a1[t] + b2*a2[t] + b3*a3[t]
		}
	}
	// The top three coefficients (those past a's degree), as far as dst reaches.
	if la < n {
		dst[la] = b1*a[la-1] + b2*a[la-2] + b3*a[la-3]
	}
	if la+1 < n {
		dst[la+1] = b2*a[la-1] + b3*a[la-2]
	}
	if la+2 < n {
		dst[la+2] = b3 * a[la-1]
	}
	return dst
}

// convAt is the coefficient t of the product of a and b.
func convAt(a, b []float64, t int) float64 {
	s := 0.0
	for h := max(0, t-len(a)+1); h <= min(len(b)-1, t); h++ {
		s += b[h] * a[t-h]
	}
	return s
}

// timesInPlace sets q to q·e up to its length (q's entries above the product's degree being 0
// on entry): q[t] = Σ_h e[h]·q[t−h], from the top down so that each entry is read before it is
// written.
func timesInPlace(q, e []float64) {
	m := len(e) - 1
	t := len(q) - 1
	if m == 3 {
		e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
		for ; t >= 3; t-- {
			q[t] = e0*q[t] + e1*q[t-1] + e2*q[t-2] + e3*q[t-3]
		}
	}
	for ; t >= 0; t-- {
		s := 0.0
		for h := 0; h <= min(m, t); h++ {
			s += e[h] * q[t-h]
		}
		q[t] = s
	}
}

// resize returns s resliced to n elements, reallocated (contents lost) if its capacity is smaller.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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

// joint adds to the upper triangle of w.h the joint probabilities Σ_r n_r P(x_i = h, x_j = g | r)
// of every pair of items i < j of the booklet.
func (w *pesfWork) joint(b *booklet, total int) {
	k := len(b.items)
	maxm := 0
	for l := 0; l < k; l++ {
		maxm = max(maxm, w.deg[l+1]-w.deg[l])
	}
	// Every weight above the highest score present is 0, and so is every weight derived from them
	// (the products below only move weights to lower degrees): nothing above rmax is computed,
	// and the 2·maxm entries above it are held at 0 so that the shifted reads need no bounds.
	rmax := w.scores[len(w.scores)-1]
	width := rmax + 2*maxm + 2
	w.u = resize(w.u, width)
	clear(w.u)
	for s := 0; s <= rmax; s++ {
		if n := b.n[s]; n > 0 {
			w.u[s] = n / w.prefix[k][s]
		}
	}
	if len(w.alpha) < k {
		w.alpha = make([][]float64, k)
	}
	for j := range k {
		w.alpha[j] = resize(w.alpha[j], width)
		clear(w.alpha[j][rmax+1:])
	}
	w.q = resize(w.q, width)
	w.w = resize(w.w, 2*maxm+1)
	for i := 0; i+1 < k; i++ {
		mi := w.deg[i+1] - w.deg[i]
		// u holds the weights of p ↦ L(prefix[i]·p), valid for degrees up to M − D_i.
		// alpha[j] holds those of p ↦ L(prefix[i]·p·suffix[j+1]); it is read at t + a with
		// t ≤ D_j − D_{i+1} (the degree of q) and a ≤ m_i + m_j.
		copy(w.alpha[k-1][:rmax+1], w.u[:rmax+1])
		for j := k - 1; j > i+1; j-- {
			n := min(w.deg[j]-w.deg[i+1]+mi+1, rmax+1) // entries of alpha[j−1] read: t + a ≤ D_j − D_{i+1} + m_i
			correlate(w.alpha[j-1][:n], w.alpha[j], w.eps[j])
		}
		q := w.q
		clear(q[:rmax+1])
		q[0] = 1
		dq := 0
		ei := w.eps[i]
		for j := i + 1; j < k; j++ {
			mj := w.deg[j+1] - w.deg[j]
			// w[s] = Σ_t q[t]·alpha[j][t+s] for 2 ≤ s ≤ m_i + m_j; q is 0 above rmax and alpha[j]
			// above rmax, so every s may run over t ≤ min(dq, rmax).
			dots(w.w[2:mi+mj+1], q[:min(dq, rmax)+1], w.alpha[j][2:])
			ej := w.eps[j]
			for h := 1; h <= mi; h++ {
				row := w.h[(w.deg[i]+h-1)*total+w.deg[j]-1:]
				for gg := 1; gg <= mj; gg++ {
					row[gg] += ei[h] * ej[gg] * w.w[h+gg]
				}
			}
			// q ← q·f_j, up to degree rmax (its higher coefficients are never read; those above dq
			// are 0)
			timesInPlace(q[:min(dq+mj, rmax)+1], ej)
			dq += mj
		}
		// u ← u ∘ (· f_i): u[t] = Σ_h ε'_ih u[t+h], in place reading ahead before writing.
		correlate(w.u[:rmax+1], w.u, ei)
	}
}

// correlate sets dst[t] = Σ_h e[h]·src[t+h] for every t < len(dst) (src has len(dst) + len(e) − 1
// entries or more); dst may be src itself, each entry being read before it is written.
func correlate(dst, src, e []float64) {
	n := len(dst)
	switch len(e) {
	case 2:
		src = src[:n+1]
		e0, e1 := e[0], e[1]
		for t := range dst {
			dst[t] = e0*src[t] + e1*src[t+1]
		}
	case 3:
		src = src[:n+2]
		e0, e1, e2 := e[0], e[1], e[2]
		for t := range dst {
			dst[t] = e0*src[t] + e1*src[t+1] + e2*src[t+2]
		}
	case 4:
		src = src[:n+3]
		e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
		for t := range dst {
			dst[t] = e0*src[t] + e1*src[t+1] + e2*src[t+2] + e3*src[t+3]
		}
	default:
		for t := range dst {
			s := 0.0
			for h, x := range src[t : t+len(e)] {
				s += e[h] * x
			}
			dst[t] = s
		}
	}
}

// window sets out[x] = Σ_a pre[a]·suf[t0+x−a], the coefficients t0 … t0 + len(out) − 1 of the
// product pre·suf (0 where out of its range). Three coefficients (an item of three steps) are
// taken in one sweep over the a that all of them use, pre[a] loaded once.
func window(out, pre, suf []float64, t0 int) {
	one := func(x, lo, hi int) {
		t := t0 + x
		for a := max(lo, 0, t-len(suf)+1); a <= min(hi, t, len(pre)-1); a++ {
			out[x] += pre[a] * suf[t-a]
		}
	}
	clear(out)
	n := len(out)
	lo, hi := max(0, t0+n-len(suf)), min(t0, len(pre)-1) // every x reads suf within range
	if n != 3 || lo > hi {
		for x := range n {
			one(x, 0, len(pre)-1)
		}
		return
	}
	var v0, v1, v2 float64
	for a := lo; a <= hi; a++ {
		p := pre[a]
		sw := suf[t0-a : t0-a+3]
		v0 += p * sw[0]
		v1 += p * sw[1]
		v2 += p * sw[2]
	}
	out[0], out[1], out[2] = v0, v1, v2
	for x := range n {
		one(x, 0, lo-1)
		one(x, hi+1, len(pre)-1)
	}
}

// mirrorUpper copies the upper triangle of the n × n matrix m (row-major) to the lower.
func mirrorUpper(m []float64, n int) {
	for i := range n {
		for j := i + 1; j < n; j++ {
			m[j*n+i] = m[i*n+j]
		}
	}
}

// dots sets out[s] = Σ_t q[t]·a[t+s] for every s < len(out) (a has len(q) + len(out) − 1 entries
// or more). Five outputs (two items of three steps) are taken in one sweep, q[t] loaded once.
func dots(out, q, a []float64) {
	if len(out) == 5 {
		a = a[:len(q)+4]
		var v0, v1, v2, v3, v4 float64
		for t, x := range q {
			w := a[t : t+5]
			v0 += x * w[0]
			v1 += x * w[1]
			v2 += x * w[2]
			v3 += x * w[3]
			v4 += x * w[4]
		}
		out[0], out[1], out[2], out[3], out[4] = v0, v1, v2, v3, v4
		return
	}
	for s := range out {
		as := a[s : s+len(q)]
		v := 0.0
		for t, x := range q {
			v += x * as[t]
		}
		out[s] = v
	}
}

func (w *pesfWork) overflow(k int) error {
	return fmt.Errorf("the symmetric functions of a booklet of %d items overflow: its thresholds are too far apart for one booklet", k)
}

// addBlocks adds to w.blocks the booklet's same-item blocks of the information (each item's
// m × m block at boff[i], upper triangle): Σ_r n_r·(1[h = g]·p_h − p_h·p_g), from the
// probabilities p alone.
func (w *pesfWork) addBlocks(b *booklet, top []int) {
	total := w.deg[len(b.items)]
	for ri, r := range w.scores {
		n := b.n[r]
		row := w.p[ri*total : (ri+1)*total]
		for l, i := range b.items {
			p := row[w.deg[l]:w.deg[l+1]]
			m := top[i]
			blk := w.blocks[w.boff[i] : w.boff[i]+m*m]
			for h, ph := range p {
				np := n * ph
				dst := blk[h*m : (h+1)*m]
				dst[h] += np
				for g := h; g < len(p); g++ {
					dst[g] -= np * p[g]
				}
			}
		}
	}
}
