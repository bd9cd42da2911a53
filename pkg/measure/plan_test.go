package measure

import (
	"math"
	"testing"
)

// atOrAbove is the single forecast's probability of the band at or above target after days.
func atOrAbove(f *Framework, prior Normal, days, testSD, target float64) Forecast {
	return f.Forecast(prior, days, testSD, []float64{target})
}

func TestPlanEqualsSingleForecasts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fw   string
		req  PlanRequest
	}{
		{"grade 3 BOY reaches", "lexile", PlanRequest{Prior: Normal{500, 60}, Grade: 3, TimeOfYear: "BOY", Target: 800, Probability: 0.5}},
		{"grade 5 MOY with test uncertainty", "quantile", PlanRequest{Prior: Normal{700, 40}, Grade: 5, TimeOfYear: "MOY", Target: 900, Probability: 0.8, TestUncertainty: 35}},
		{"grade 11 EOY short horizon", "lexile", PlanRequest{Prior: Normal{1000, 30}, Grade: 11, TimeOfYear: "EOY", Target: 1030, Probability: 0.5, HorizonDays: 400}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := testFramework(t, c.fw)
			plan, err := f.Plan(c.req)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if len(plan.Trajectory) == 0 {
				t.Fatal("got an empty trajectory; want points")
			}
			for i, p := range plan.Trajectory {
				fc := atOrAbove(f, c.req.Prior, p.ElapsedDays, c.req.TestUncertainty, c.req.Target)
				if p.Ability != fc.Ability || p.Uncertainty != fc.Uncertainty || p.Probability != fc.Probabilities[1] {
					t.Errorf("point %d (day %v): got (%v, %v, %v); want the single forecast's (%v, %v, %v)",
						i, p.ElapsedDays, p.Ability, p.Uncertainty, p.Probability, fc.Ability, fc.Uncertainty, fc.Probabilities[1])
				}
			}
			if plan.Reach == nil {
				t.Fatal("got no reach; want one (the cases are chosen to reach)")
			}
			r := plan.Reach
			fc := atOrAbove(f, c.req.Prior, r.ElapsedDays, c.req.TestUncertainty, c.req.Target)
			if r.Ability != fc.Ability || r.Uncertainty != fc.Uncertainty || r.Probability != fc.Probabilities[1] {
				t.Errorf("reach: got (%v, %v, %v); want the single forecast's (%v, %v, %v)", r.Ability, r.Uncertainty, r.Probability, fc.Ability, fc.Uncertainty, fc.Probabilities[1])
			}
			assertFirstDay(t, f, c.req, plan)
		})
	}
}

// assertFirstDay checks the reach against every day of the horizon, one forecast each.
func assertFirstDay(t *testing.T, f *Framework, req PlanRequest, plan Plan) {
	t.Helper()
	first := -1
	for d := 0; d <= plan.HorizonDays; d++ {
		if atOrAbove(f, req.Prior, float64(d), req.TestUncertainty, req.Target).Probabilities[1] >= req.Probability {
			first = d
			break
		}
	}
	// The peak: the first day of the highest probability, every day looked at.
	peak, peakDay := -1.0, -1
	for d := 0; d <= plan.HorizonDays; d++ {
		if v := atOrAbove(f, req.Prior, float64(d), req.TestUncertainty, req.Target).Probabilities[1]; v > peak {
			peak, peakDay = v, d
		}
	}
	if plan.Peak.ElapsedDays != float64(peakDay) || plan.Peak.Probability != peak {
		t.Errorf("peak: got day %v probability %v; want day %d probability %v", plan.Peak.ElapsedDays, plan.Peak.Probability, peakDay, peak)
	}
	switch {
	case first < 0 && plan.Reach != nil:
		t.Errorf("got a reach on day %v; want none (no day within %d reaches %v)", plan.Reach.ElapsedDays, plan.HorizonDays, req.Probability)
	case first >= 0 && plan.Reach == nil:
		t.Errorf("got no reach; want day %d", first)
	case first >= 0 && plan.Reach.ElapsedDays != float64(first):
		t.Errorf("got reach on day %v; want day %d, the first", plan.Reach.ElapsedDays, first)
	}
}

// At the top of the lexile scale growth is 15L a year while σ widens as √days, so a student
// above the target with a small uncertainty first loses probability, then regains it: p(d) is
// not monotone, and the reach must be the first day, not one bisection would find.
func TestPlanNotMonotone(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	base := PlanRequest{Prior: Normal{1105, 20}, Grade: 12, TimeOfYear: "BOY", Target: 1100, HorizonDays: 3653}
	p := func(d int) float64 { return atOrAbove(f, base.Prior, float64(d), 0, base.Target).Probabilities[1] }
	low, lowDay := 1.0, 0
	for d := 0; d <= 3653; d++ {
		if v := p(d); v < low {
			low, lowDay = v, d
		}
	}
	if !(low < p(0) && low < p(3653)) {
		t.Fatalf("p(0)=%v, min %v on day %d, p(3653)=%v: the case no longer dips; choose another", p(0), low, lowDay, p(3653))
	}
	t.Run("first day after a dip", func(t *testing.T) {
		t.Parallel()
		req := base
		req.Probability = (low + math.Min(p(0), p(3653))) / 2 // reached on day 0, lost, then regained
		plan, err := f.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Reach == nil || plan.Reach.ElapsedDays != 0 {
			t.Errorf("got reach %+v; want day 0 (p(0)=%v ≥ %v)", plan.Reach, p(0), req.Probability)
		}
		assertFirstDay(t, f, req, plan)
	})
	t.Run("regained after the dip", func(t *testing.T) {
		t.Parallel()
		req := base
		if p(3653) <= p(0) {
			t.Fatalf("p(3653)=%v ≤ p(0)=%v: the case does not regain more than it started with", p(3653), p(0))
		}
		req.Probability = (p(0) + p(3653)) / 2 // above the start: reached only late, after the dip
		plan, err := f.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Reach == nil || plan.Reach.ElapsedDays <= float64(lowDay) {
			t.Errorf("got reach %+v; want a day after the dip's bottom (%d)", plan.Reach, lowDay)
		}
		assertFirstDay(t, f, req, plan)
	})
	t.Run("never", func(t *testing.T) {
		t.Parallel()
		req := base
		req.Probability = math.Nextafter(math.Max(p(0), p(3653)), 1) + 1e-9
		plan, err := f.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Reach != nil {
			t.Errorf("got reach on day %v; want none", plan.Reach.ElapsedDays)
		}
		assertFirstDay(t, f, req, plan)
	})
}

func TestPlanTrajectoryPoints(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	type label struct {
		grade int
		toy   string
		days  float64
	}
	cases := []struct {
		name string
		req  PlanRequest
		want []label
	}{
		{"BOY: the MOY next", PlanRequest{Prior: Normal{1000, 50}, Grade: 11, TimeOfYear: "BOY", Target: 1100, Probability: 0.5},
			[]label{{11, "MOY", 182.625}, {11, "EOY", 365.25}, {12, "MOY", 547.875}, {12, "EOY", 730.5}}},
		{"MOY: the EOY next", PlanRequest{Prior: Normal{1000, 50}, Grade: 12, TimeOfYear: "MOY", Target: 1100, Probability: 0.5},
			[]label{{12, "EOY", 182.625}}},
		{"EOY: the next grade's MOY, horizon cuts", PlanRequest{Prior: Normal{900, 50}, Grade: 9, TimeOfYear: "EOY", Target: 1100, Probability: 0.5, HorizonDays: 547},
			[]label{{10, "MOY", 182.625}, {10, "EOY", 547.875 - 182.625}}},
		{"horizon just past a point", PlanRequest{Prior: Normal{900, 50}, Grade: 9, TimeOfYear: "EOY", Target: 1100, Probability: 0.5, HorizonDays: 183},
			[]label{{10, "MOY", 182.625}}},
		{"horizon just short of a point", PlanRequest{Prior: Normal{900, 50}, Grade: 9, TimeOfYear: "EOY", Target: 1100, Probability: 0.5, HorizonDays: 182},
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plan, err := f.Plan(c.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Trajectory) != len(c.want) {
				t.Fatalf("got %d points %+v; want %d", len(plan.Trajectory), plan.Trajectory, len(c.want))
			}
			for i, w := range c.want {
				p := plan.Trajectory[i]
				if p.Grade != w.grade || p.TimeOfYear != w.toy || math.Abs(p.ElapsedDays-w.days) > 1e-9 {
					t.Errorf("point %d: got grade %d %s day %v; want grade %d %s day %v", i, p.Grade, p.TimeOfYear, p.ElapsedDays, w.grade, w.toy, w.days)
				}
			}
		})
	}
}

func TestPlanHorizon(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	cases := []struct {
		name    string
		grade   int
		toy     string
		horizon int
		want    int // the horizon used; 0: refused
	}{
		{"default from grade 3 BOY: capped at 3653", 3, "BOY", 0, 3653},
		{"default from grade 4 MOY: to the end of grade 12", 4, "MOY", 0, 3105}, // ⌈8.5·365.25⌉ = ⌈3104.625⌉
		{"default from grade 12 EOY: at least one day", 12, "EOY", 0, 1},
		{"1 accepted", 5, "BOY", 1, 1},
		{"3653 accepted", 5, "BOY", 3653, 3653},
		{"3654 refused", 5, "BOY", 3654, 0},
		{"-1 refused", 5, "BOY", -1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plan, err := f.Plan(PlanRequest{Prior: Normal{600, 50}, Grade: c.grade, TimeOfYear: c.toy, Target: 5000, Probability: 0.5, HorizonDays: c.horizon})
			if c.want == 0 {
				if err == nil {
					t.Fatalf("got horizon %d accepted; want an error", plan.HorizonDays)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.HorizonDays != c.want {
				t.Errorf("got horizon %d; want %d", plan.HorizonDays, c.want)
			}
		})
	}
}

func TestPlanProbabilityBounds(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile")
	for _, c := range []struct {
		p  float64
		ok bool
	}{{0, false}, {math.SmallestNonzeroFloat64, true}, {0.5, true}, {math.Nextafter(1, 0), true}, {1, false}, {math.NaN(), false}} {
		_, err := f.Plan(PlanRequest{Prior: Normal{600, 50}, Grade: 5, TimeOfYear: "BOY", Target: 700, Probability: c.p, HorizonDays: 10})
		if (err == nil) != c.ok {
			t.Errorf("probability %v: got error %v; want accepted=%v", c.p, err, c.ok)
		}
	}
	if _, err := f.Plan(PlanRequest{Prior: Normal{600, 50}, Grade: 5, TimeOfYear: "moy", Target: 700, Probability: 0.5}); err == nil {
		t.Error(`time of year "moy": got accepted; want an error (the caller normalises case)`)
	}
}

// The plan of the longest horizon against one single forecast: docs/performance.md reports the
// ratio of the two (3,654 days searched, plus the trajectory's points).
func BenchmarkPlan(b *testing.B) {
	f := testFramework(b, "lexile")
	req := PlanRequest{Prior: Normal{400, 60}, Grade: 2, TimeOfYear: "BOY", Target: 5000, Probability: 0.5, HorizonDays: MaxPlanDays}
	b.Run("plan 3653 days never reached", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Plan(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one forecast", func(b *testing.B) {
		for b.Loop() {
			atOrAbove(f, req.Prior, 1000, 0, req.Target)
		}
	})
}

// TestSchoolWindow: a day's window by the calendar of §4 and §14 (BOY at g, MOY at g + 0.5, EOY
// at g + 1 years), a quarter year either side, both sides of each boundary.
func TestSchoolWindow(t *testing.T) {
	t.Parallel()
	q := daysPerYear / 4
	for _, tc := range []struct {
		name     string
		t0, days float64
		grade    int
		toy      string
		ok       bool
	}{
		{"the measure's own day, BOY", 3, 0, 3, "BOY", true},
		{"just before a quarter year", 3, q - 0.01, 3, "BOY", true},
		{"a quarter year", 3, q, 3, "MOY", true},
		{"the middle", 3, 2 * q, 3, "MOY", true},
		{"just before three quarters", 3, 3*q - 0.01, 3, "MOY", true},
		{"three quarters", 3, 3 * q, 3, "EOY", true},
		{"just before the year's end", 3, 4*q - 0.01, 3, "EOY", true},
		{"the year's end is the next grade's beginning", 3, 4 * q, 4, "BOY", true},
		{"from a MOY measure", 5.5, 2 * q, 6, "BOY", true},
		{"the end of grade 12", 12, daysPerYear, 12, "EOY", true},
		{"past the end of grade 12", 12, daysPerYear + 1, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, toy, ok := SchoolWindow(tc.t0, tc.days)
			if g != tc.grade || toy != tc.toy || ok != tc.ok {
				t.Errorf("SchoolWindow(%v, %v): got %d %q %v; want %d %q %v", tc.t0, tc.days, g, toy, ok, tc.grade, tc.toy, tc.ok)
			}
		})
	}
}
