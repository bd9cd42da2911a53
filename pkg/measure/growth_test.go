package measure

import (
	"math"
	"testing"
)

func TestNormCurveThroughMedians(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		c := &f.prep.curve
		for g, v := range f.Norm {
			tt := float64(g) + 0.5
			if got := c.at(tt); math.Abs(got-v) > 1e-9 {
				t.Errorf("%s N(%v) = %v; want the grade %d median %v", name, tt, got, g, v)
			}
			// One year after a median is the next grade's median.
			if g < Grades-1 {
				if got := f.Expected(v, daysPerYear); math.Abs(got-f.Norm[g+1]) > 1e-6 {
					t.Errorf("%s Expected(%v, 1 year) = %v; want %v", name, v, got, f.Norm[g+1])
				}
			}
		}
		// Monotone everywhere, and inverse(at(t)) = t.
		prev := math.Inf(-1)
		for tt := -3.0; tt <= 16; tt += 0.01 {
			v := c.at(tt)
			if v < prev {
				t.Fatalf("%s N(%v) = %v is below N(%v) = %v", name, tt, v, tt-0.01, prev)
			}
			prev = v
			if back := c.inverse(v); math.Abs(back-tt) > 1e-9 {
				t.Errorf("%s N⁻¹(N(%v)) = %v", name, tt, back)
			}
		}
	}
}

// TestGrowthBeyondTheEnds: outside the norm curve growth continues with the curve's end slope.
// Fritsch–Butland's end derivative for lexile is (3·200 − 180)/2 = 210 per year at the bottom
// (K → 1 → 2 rises 200 then 180) and (3·15 − 25)/2 = 10 per year at the top (10 → 11 → 12 rises
// 25 then 15).
func TestGrowthBeyondTheEnds(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	for _, c := range []struct {
		ability, days, want float64
	}{
		{-1000, daysPerYear, -1000 + 210},
		{-1000, daysPerYear / 2, -1000 + 105},
		{2000, daysPerYear, 2010},
		{5000, 3 * daysPerYear, 5030},
		{1090, daysPerYear, 1100}, // from the grade 12 median onwards
	} {
		if got := f.Expected(c.ability, c.days); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Expected(%v, %v) = %v; want %v", c.ability, c.days, got, c.want)
		}
	}
}

func TestGrowthNeverNegative(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		for a := -2000.0; a <= 3000; a += 7.3 {
			prev := a
			for _, days := range []float64{0, 1, 30, 180, 365, 1000, 5000} {
				got := f.Expected(a, days)
				if got < prev {
					t.Errorf("%s Expected(%v, %v) = %v is below %v", name, a, days, got, prev)
				}
				prev = got
			}
		}
		for _, days := range []float64{-10, math.NaN()} {
			if got := f.Expected(500, days); got != 500 {
				t.Errorf("%s Expected(500, %v) = %v; want 500 (no growth)", name, days, got)
			}
		}
	}
}

func TestGrowWidening(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile")
	for _, c := range []struct {
		sd, days, want float64
	}{
		{100, 0, 100},
		{100, daysPerYear, math.Sqrt(100*100 + 75*75)},
		{100, 4 * daysPerYear, math.Sqrt(100*100 + 4*75*75)},
		{100, 100 * daysPerYear, 300}, // capped at P
		{500, 0, 300},                 // a prior vaguer than the population takes P
		{299, 10 * daysPerYear, 300},  // capped
		{50, -5, 50},                  // negative days: no change
		{250, daysPerYear / 4, math.Sqrt(250*250 + 75*75/4.0)},
	} {
		got := f.Grow(Normal{Mean: 600, SD: c.sd}, c.days)
		if math.Abs(got.SD-c.want) > 1e-9 {
			t.Errorf("Grow(SD %v, %v days).SD = %v; want %v", c.sd, c.days, got.SD, c.want)
		}
		if want := f.Expected(600, c.days); got.Mean != want {
			t.Errorf("Grow(SD %v, %v days).Mean = %v; want Expected = %v", c.sd, c.days, got.Mean, want)
		}
	}
}
