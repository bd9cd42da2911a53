package measure

import "math"

// envGrid evaluates an item's information along the envelope's grid. Between two abilities w
// logits apart the weight of score h changes by the factor e^(h·w), so along cells of one width
// the weights are carried by multiplications, and computed afresh (one exp per score, as
// scoreMoments) every envExact cells, at a cell of another width and at the start: the carried
// weights drift by a few ulps a cell, far below the envelope's margin.
type envGrid struct {
	cum     []float64 // Σ_{k≤h} o_k for h = 0 … m, o_k the steps' logits from the difficulty
	weight  []float64 // the scores' weights at the last point, relative to the largest when fresh
	factor  []float64 // e^(h·w) for the cells' width w
	carried int       // cells carried since the weights were fresh
}

// envExact is how many cells the weights are carried before they are computed afresh.
const envExact = 8

// reset prepares g for an item with these step logits o_k and the cells' width w.
func (g *envGrid) reset(offsets []float64, w float64) {
	m := len(offsets)
	g.cum, g.weight, g.factor = g.cum[:0], g.weight[:0], g.factor[:0]
	c := 0.0
	g.cum = append(g.cum, 0)
	for _, o := range offsets {
		c += o
		g.cum = append(g.cum, c)
	}
	for h := 0; h <= m; h++ {
		g.weight = append(g.weight, 0)
		g.factor = append(g.factor, math.Exp(float64(h)*w))
	}
}

// at is V at u, computed afresh.
func (g *envGrid) at(u float64) float64 {
	top := math.Inf(-1)
	for h, c := range g.cum {
		top = max(top, float64(h)*u-c)
	}
	for h, c := range g.cum {
		g.weight[h] = math.Exp(float64(h)*u - c - top)
	}
	g.carried = 0
	return g.variance()
}

// next is V one cell of the grid's width after the last point, at u.
func (g *envGrid) next(u float64) float64 {
	if g.carried++; g.carried >= envExact {
		return g.at(u)
	}
	for h, f := range g.factor {
		g.weight[h] *= f
	}
	return g.variance()
}

// variance is the variance of the score under the weights, about the most likely score (as
// scoreMoments) so that it keeps its precision when one score holds nearly everything.
func (g *envGrid) variance() float64 {
	mode, big := 0, 0.0
	for h, t := range g.weight {
		if t > big {
			mode, big = h, t
		}
	}
	var s0, s1, s2 float64
	for h, t := range g.weight {
		d := float64(h - mode)
		s0 += t
		s1 += d * t
		s2 += d * d * t
	}
	dE := s1 / s0
	return math.Max(s2/s0-dE*dE, 0)
}
