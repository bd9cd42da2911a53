package measure

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
