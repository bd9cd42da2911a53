package measure

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStepExp: stepExp is math.Exp within 5e-16 relative (2 ulps) over ±maxRatioLogits (500,000 seeded
// points, the ends, 0 and the points where the table's index turns over).
func TestStepExp(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 42))
	points := []float64{0, maxRatioLogits, -maxRatioLogits, math.Ln2 / 128, -math.Ln2 / 128, math.Ln2, 1e-300, -1e-300}
	for k := -5; k <= 5; k++ {
		points = append(points, float64(k)*math.Ln2/64, math.Nextafter(float64(k)*math.Ln2/64, 1))
	}
	for range 500_000 {
		points = append(points, maxRatioLogits*(2*rng.Float64()-1))
	}
	worst := 0.0
	for _, u := range points {
		got, want := stepExp(u), math.Exp(u)
		rel := math.Abs(got/want - 1)
		worst = math.Max(worst, rel)
		if rel > 5e-16 {
			t.Errorf("stepExp(%v) = %v; want %v (relative %.3g)", u, got, want, rel)
		}
	}
	t.Logf("largest relative difference %.3g", worst)
}
