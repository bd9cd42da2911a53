package measure

import (
	"fmt"
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

// TestGrowthBeyondTheEnds: outside the norm curve growth continues along the straight line of the
// end segment (§4): the secant through the last two grade medians. lexile rises 200 from K to 1
// (200 a year below K) and 15 from 11 to 12 (15 a year above 12); quantile 268 and 35. The old
// continuation used PCHIP's end derivative instead (lexile 210 and 10, quantile 1.5 at the top),
// and every "want" below differs from what it gave.
func TestGrowthBeyondTheEnds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                string
		ability, days, want float64
	}{
		{"lexile", -1000, daysPerYear, -1000 + 200},
		{"lexile", -1000, daysPerYear / 2, -1000 + 100},
		{"lexile", -60, daysPerYear, -60 + 200}, // from the K median the first year is the K→1 segment
		{"lexile", 2000, daysPerYear, 2015},
		{"lexile", 5000, 3 * daysPerYear, 5045},
		{"lexile", 1090, daysPerYear, 1105}, // from the grade 12 median onwards
		{"quantile", -1000, daysPerYear, -1000 + 268},
		{"quantile", 1100, daysPerYear, 1135},
		{"quantile", 1100, 1000, 1100 + 35*1000/daysPerYear},
		{"quantile", 3000, 2 * daysPerYear, 3070},
	} {
		t.Run(fmt.Sprintf("%s %v %v", c.name, c.ability, c.days), func(t *testing.T) {
			t.Parallel()
			f := testFramework(t, c.name)
			if got := f.Expected(c.ability, c.days); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("Expected(%v, %v) = %v; want %v", c.ability, c.days, got, c.want)
			}
			// The inverse uses the same line: N⁻¹ of a value beyond the ends, moved on, gives back
			// the same value's growth from the line alone.
			c0 := &f.prep.curve
			if back := c0.at(c0.inverse(c.ability)); math.Abs(back-c.ability) > 1e-9 {
				t.Errorf("N(N⁻¹(%v)) = %v", c.ability, back)
			}
		})
	}
}

// TestGrowthNearTheTopKeepsStudentsApart is the reported case: with PCHIP's end derivative
// (1.5Q a year above the quantile top) a 1050Q student grew 48Q in the first year while a 1100Q
// one grew 1.5Q, and after 1,000 days they were 2Q apart. Along the last segment's line the
// student above the top median grows 35Q a year, and the gap after 1,000 days is 42Q (asserted: at
// least 25Q).
func TestGrowthNearTheTopKeepsStudentsApart(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile")
	low, high := f.Expected(1050, 1000), f.Expected(1100, 1000)
	if gap := high - low; gap < 25 {
		t.Errorf("after 1,000 days: 1100Q → %v, 1050Q → %v, gap %v; want at least 25Q", high, low, gap)
	}
	if got := f.Expected(1100, daysPerYear) - 1100; math.Abs(got-35) > 1e-9 {
		t.Errorf("a 1100Q student grows %vQ a year; want 35Q (the grade 11→12 secant)", got)
	}
	// Two students both above the top move along one line: their gap never changes.
	for _, days := range []float64{30, 365, 1000, 3653} {
		if gap := f.Expected(1300, days) - f.Expected(1200, days); math.Abs(gap-100) > 1e-9 {
			t.Errorf("%v days: 1300Q and 1200Q are %v apart; want 100", days, gap)
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
		{100, 100 * daysPerYear, 300}, // widening capped at P
		{299, 10 * daysPerYear, 300},  // capped
		{300, 10 * daysPerYear, 300},  // at P: no widening
		{50, -5, 50},                  // negative days: no change
		{250, daysPerYear / 4, math.Sqrt(250*250 + 75*75/4.0)},
		// A prior SD above P stays as given (the cap bounds the widening only); the old code
		// replaced it with P, so a vague prior could not be asked for.
		{500, 0, 500},
		{500, 10 * daysPerYear, 500},
		{10000, 0, 10000},
		{10000, 3653, 10000},
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

// TestVaguePriorReachesMLE: "EAP tends to MLE as τ grows" must be reachable through the API the
// services use (Grow, then Bayes). Under the old cap a priorUncertainty of 10,000 became 300, and
// a prior 900 units above the MLE pulled the EAP 9 units (a third of an SE) towards it.
func TestVaguePriorReachesMLE(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	tt := Test{Items: spread(240, 600, 500), Correct: 160}
	std, err := f.Standard(tt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sd, days float64
		maxGap   float64 // as a fraction of the SE
	}{
		{10000, 0, 0.05},
		{10000, 3653, 0.05},
		{300, 0, 1}, // the population's spread still shrinks visibly, but less than an SE
	} {
		prior := f.Grow(Normal{Mean: std.Ability + 900, SD: c.sd}, c.days)
		if prior.SD < c.sd {
			t.Errorf("Grow(SD %v, %v days).SD = %v; want at least %v", c.sd, c.days, prior.SD, c.sd)
		}
		bay, err := f.Bayes(tt, prior)
		if err != nil {
			t.Fatal(err)
		}
		if gap := math.Abs(bay.Ability - std.Ability); gap > c.maxGap*std.Uncertainty {
			t.Errorf("SD %v: |EAP %v − MLE %v| = %v; want at most %v·SE (SE %v)", c.sd, bay.Ability, std.Ability, gap, c.maxGap, std.Uncertainty)
		}
	}
}
