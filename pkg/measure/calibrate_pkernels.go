package measure

// The polynomial kernels of the partial credit symmetric functions: products by an item's
// polynomial (its few coefficients in registers), correlations and shifted dot products with
// the adjoint weights, all over sums of positive terms.

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
