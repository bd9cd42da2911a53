package measure

import (
	"slices"
	"testing"
)

// TestGrowthQuantilesAndSGP pins §15's reading of a model: quantiles sorted, rounded to 5
// decimals and clamped into the cohort's range; SGP the count strictly below, 0 as 1 and 100 as
// 99; a prior beyond the boundaries read as at the boundary.
func TestGrowthQuantilesAndSGP(t *testing.T) {
	t.Parallel()
	// Intercept-only quantiles 600 + 2k, except τ_100 placed below τ_1 (a crossing) and τ_50
	// needing rounding; the spline columns carry weight so that the prior matters.
	m := handModel(g6EOY, g5EOY)
	m.Lowest, m.Highest = 560, 840
	for k := range m.Coefficients {
		c := m.Coefficients[k]
		c[0] = 600 + 2*float64(k+1)
		for j := 1; j < len(c); j++ {
			c[j] = 0
		}
		c[SplineColumns] = 50 // the last basis column: 1 at the upper boundary, 0 below the last knot
	}
	m.Coefficients[99][0] = 550         // crossing, below Lowest: clamped to 560
	m.Coefficients[49][0] = 700.0000049 // rounds to 700
	at := 500.0                         // a prior below the last knot: the last column is 0
	q := m.Quantiles([]float64{at})
	if !slices.IsSorted(q[:]) {
		t.Fatalf("quantiles not sorted: %v", q)
	}
	if q[0] != 560 {
		t.Errorf("lowest quantile: got %v; want 560 (the crossing τ_100 clamped to Lowest)", q[0])
	}
	if q[50] != 700 { // τ_50 is the 51st after the crossing one moved first
		t.Errorf("q[50]: got %v; want 700 (rounded to 5 decimals)", q[50])
	}
	for _, tc := range []struct {
		name    string
		current float64
		want    int
	}{
		{"below every quantile", 559, 1},
		{"at the lowest quantile", 560, 1},
		{"just above the lowest", 560.5, 1},
		{"above three (560, 602, 604)", 604.5, 3},
		{"at q[50] (not strictly above)", 700, 50},
		{"just above q[50]", 700.00001, 51},
		{"at the highest", q[99], 99},
		{"above every quantile", 901, 99},
	} {
		if got := SGP(&q, tc.current); got != tc.want {
			t.Errorf("%s (%v): SGP got %d; want %d", tc.name, tc.current, got, tc.want)
		}
	}
	if got := Cut(&q, 1); got != q[0] {
		t.Errorf("cut 1: got %v; want %v", got, q[0])
	}
	if got := Cut(&q, 99); got != q[98] {
		t.Errorf("cut 99: got %v; want %v", got, q[98])
	}
	// Beyond the boundaries: as at the boundary, on both sides.
	s := m.Splines[0]
	for _, tc := range []struct{ beyond, at float64 }{{s.Boundaries[1] + 500, s.Boundaries[1]}, {s.Boundaries[0] - 500, s.Boundaries[0]}} {
		if got, want := m.Quantiles([]float64{tc.beyond}), m.Quantiles([]float64{tc.at}); got != want {
			t.Errorf("prior %v: quantiles %v; want those at the boundary %v: %v", tc.beyond, got, tc.at, want)
		}
	}
	hi := m.Quantiles([]float64{s.Boundaries[1]})
	if hi[1] != 652 || hi[96] != 840 || hi[97] != 840 {
		t.Errorf("at the upper boundary: q[1] %v, q[96] %v, q[97] %v; want 652 (602 + 50), 840 (794 + 50 clamped to Highest), 840", hi[1], hi[96], hi[97])
	}
}

func TestSplineFor(t *testing.T) {
	t.Parallel()
	// 0 … 10: type-7 quantiles at 0.2 … 0.8 are 2, 4, 6, 8; boundaries −1 and 11.
	v := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	s := SplineFor(v)
	if want := [4]float64{2, 4, 6, 8}; s.Knots != want {
		t.Errorf("knots: got %v; want %v", s.Knots, want)
	}
	if want := [2]float64{-1, 11}; s.Boundaries != want {
		t.Errorf("boundaries: got %v; want %v", s.Boundaries, want)
	}
	// Interpolation and rounding: n = 4, h = 0.6 → 1 + 0.6·(2.0004 − 1) = 1.60024 → 1.6.
	s = SplineFor([]float64{1, 2.0004, 3, 4.0001})
	if s.Knots[0] != 1.6 {
		t.Errorf("knot 1: got %v; want 1.6", s.Knots[0])
	}
	if s.Boundaries != [2]float64{0.7, 4.3} {
		t.Errorf("boundaries: got %v; want [0.7 4.3]", s.Boundaries)
	}
}
