package measure

import (
	"math"
	"sort"
)

// Norms is one norms table of the bundle (§12): for a framework, grade and time of year, the
// measure at each of a few percentiles, both strictly increasing.
type Norms struct {
	Percentiles []float64 // in (0, 100), increasing
	Measures    []float64 // measure units, increasing
}

// Rank is the percentile rank of a measure: linear interpolation between the two surrounding
// points of the table (beyond its ends, along the end segment's line), rounded half up and
// clamped to 1–99. It is monotone in the measure. NaN (never produced) gives 0.
func (n Norms) Rank(measure float64) int {
	if math.IsNaN(measure) || len(n.Measures) < 2 {
		return 0
	}
	last := len(n.Measures) - 1
	// i: the segment [i, i+1] that holds measure, or the end segment beyond either end.
	i := sort.SearchFloat64s(n.Measures, measure) - 1
	i = min(max(i, 0), last-1)
	m0, m1 := n.Measures[i], n.Measures[i+1]
	p0, p1 := n.Percentiles[i], n.Percentiles[i+1]
	v := p0 + (p1-p0)*(measure-m0)/(m1-m0)
	return int(min(max(math.Floor(v+0.5), 1), 99))
}

// Norms returns the bundle's norms table for a framework, grade (0..12) and time of year (BOY,
// MOY or EOY); ok is false where the bundle has none (the norms file is optional).
func (b *Bundle) Norms(framework string, grade int, timeOfYear string) (Norms, bool) {
	n, ok := b.norms[benchKey{framework, grade, timeOfYear}]
	return n, ok
}
