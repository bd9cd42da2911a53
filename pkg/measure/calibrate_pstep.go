package measure

import "math"

// stepCache holds, for one set of thresholds δ, every item's A_ih = exp(−Σ_{s≤h} (δ_is − c0))
// about their mean c0, so that a booklet's ε'_lh = exp(−Σ_{s≤h} (δ_ls − c)), centred on its own
// mean threshold c, is A_ih·ρ^h with ρ = e^(c − c0): one exp a booklet instead of one a step.
// Where an A_ih or a ρ^h would leave e^±300 (steps hundreds of logits apart) the booklet takes
// its exponentials itself, as without the cache.
type stepCache struct {
	valid bool      // filled for the thresholds of the current pass
	c0    float64   // the mean threshold
	a     []float64 // A_ih at off[i] + h − 1
	sum   []float64 // Σ_h δ_ih of each item
	ok    []bool    // every A_ih of the item within e^±300
}

// stepCacheRange bounds the exponents the cache multiplies: two factors within e^±300 give a
// product within e^±600, far from overflow (e^709) and from the subnormals.
const stepCacheRange = 300

// prepare fills the cache for thresholds delta and marks it valid (until done).
func (c *stepCache) prepare(delta []float64, top, off []int) {
	n := len(top)
	c.a = resize(c.a, len(delta))
	c.sum = resize(c.sum, n)
	c.ok = resize(c.ok, n)
	c.c0 = 0
	for _, d := range delta {
		c.c0 += d
	}
	c.c0 /= float64(len(delta))
	for i := range n {
		cum, sum := 0.0, 0.0
		c.ok[i] = true
		for h := 1; h <= top[i]; h++ {
			d := delta[off[i]+h-1]
			sum += d
			cum += d - c.c0
			if math.Abs(cum) > stepCacheRange {
				c.ok[i] = false
			}
			c.a[off[i]+h-1] = math.Exp(-cum)
		}
		c.sum[i] = sum
	}
	c.valid = true
}

// done marks the cache stale.
func (c *stepCache) done() { c.valid = false }

// fill sets eps[l] to the ε'_lh of the booklet's items centred on c; false (eps untouched as
// far as the caller is concerned) if a ρ^h would leave the cache's range.
func (c *stepCache) fill(eps [][]float64, items, top, off []int, c1 float64) bool {
	shift := c1 - c.c0
	for _, i := range items {
		if math.Abs(shift)*float64(top[i]) > stepCacheRange {
			return false
		}
	}
	rho := math.Exp(shift)
	for l, i := range items {
		m := top[i]
		e := resize(eps[l], m+1)
		e[0] = 1
		a := c.a[off[i] : off[i]+m]
		p := 1.0
		for h, x := range a {
			p *= rho
			e[h+1] = x * p
		}
		eps[l] = e
	}
	return true
}
