package measure

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// spread returns n unit items evenly spaced over [centre − half, centre + half].
func spread(n int, centre, half float64) []Difficulty {
	d := make([]Difficulty, n)
	for i := range d {
		u := 0.0
		if n > 1 {
			u = float64(i)/float64(n-1)*2 - 1
		}
		d[i] = Difficulty{Measure: centre + half*u, Count: 1}
	}
	return d
}

// expectedScore is Σ P_i(θ) computed with the public scale model.
func expectedScore(f *Framework, items []Difficulty, theta float64) (sum, info float64) {
	for _, d := range items {
		p := f.Probability(theta, d.Measure)
		sum += float64(d.Count) * p
		info += float64(d.Count) * p * (1 - p)
	}
	return sum, info
}

func TestProbabilityAtMatch(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		for _, d := range []float64{-400, 0, 515.5, 1800} {
			if got := f.Probability(d, d); math.Abs(got-f.SuccessAtMatch) > 1e-15 {
				t.Errorf("%s: P(θ = d = %v) = %v; want m = %v", name, d, got, f.SuccessAtMatch)
			}
		}
		// One logit above the item: odds multiply by e.
		odds := func(p float64) float64 { return p / (1 - p) }
		if got, want := odds(f.Probability(680, 500)), math.E*odds(f.SuccessAtMatch); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: odds one logit above = %v; want %v", name, got, want)
		}
	}
}

func TestStandardSolvesScoreEquation(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		items := append(spread(30, 600, 300), Difficulty{Measure: 900, Count: 5}, Difficulty{Measure: 200, Count: 3})
		n := 38
		for r := 0; r <= n; r++ {
			est, err := f.Standard(Test{Items: items, Correct: r})
			if err != nil {
				t.Fatalf("%s r=%d: %v", name, r, err)
			}
			target := float64(r)
			switch r {
			case 0:
				target = f.ExtremeAdjust
			case n:
				target = float64(n) - f.ExtremeAdjust
			}
			sum, info := expectedScore(f, items, est.Ability)
			if math.Abs(sum-target) > 1e-7 {
				t.Errorf("%s r=%d: Σ P(θ̂) = %.10f; want %v", name, r, sum, target)
			}
			if want := f.UnitsPerLogit / math.Sqrt(info); math.Abs(est.Uncertainty-want) > 1e-6 {
				t.Errorf("%s r=%d: uncertainty %v; want s/√I = %v", name, r, est.Uncertainty, want)
			}
		}
	}
}

// bisect is an independent root finder for Σ P_i(θ) = r (plain bisection on the public model).
func bisect(f *Framework, items []Difficulty, r float64) float64 {
	lo, hi := -20000.0, 20000.0
	for hi-lo > 1e-10 {
		mid := (lo + hi) / 2
		if s, _ := expectedScore(f, items, mid); s < r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func TestStandardMatchesBisection(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	cases := []struct {
		name  string
		items []Difficulty
		r     int
	}{
		{"one item right", spread(1, 500, 0), 1},
		{"one item wrong", spread(1, 500, 0), 0},
		{"40 items half", spread(40, 700, 360), 20},
		{"40 items 39", spread(40, 700, 360), 39},
		{"clustered counts", []Difficulty{{Measure: 100, Count: 50}, {Measure: 1500, Count: 50}}, 51},
		{"1000 items", spread(1000, 300, 1000), 777},
		{"wide spread", []Difficulty{{Measure: -5000, Count: 1}, {Measure: 8000, Count: 1}, {Measure: 300, Count: 2}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			est, err := f.Standard(Test{Items: c.items, Correct: c.r})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, d := range c.items {
				n += d.Count
			}
			r := float64(c.r)
			if c.r == 0 {
				r = f.ExtremeAdjust
			} else if c.r == n {
				r = float64(n) - f.ExtremeAdjust
			}
			want := bisect(f, c.items, r)
			if d := math.Abs(est.Ability-want) / f.UnitsPerLogit; d > 1e-8 {
				t.Errorf("ability %v; want %v (bisection), %.2g logits apart", est.Ability, want, d)
			}
		})
	}
}

func TestStandardInvariants(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile")
	items := spread(25, 800, 400)
	prev := math.Inf(-1)
	for r := 0; r <= 25; r++ {
		est, err := f.Standard(Test{Items: items, Correct: r})
		if err != nil {
			t.Fatal(err)
		}
		if est.Ability <= prev {
			t.Errorf("r=%d: ability %v is not above r=%d's %v", r, est.Ability, r-1, prev)
		}
		prev = est.Ability
	}
	// More items at the same proportion correct: smaller uncertainty.
	prevSE := math.Inf(1)
	for _, n := range []int{5, 10, 20, 40, 80, 160} {
		est, err := f.Standard(Test{Items: spread(n, 800, 400), Correct: n * 3 / 5})
		if err != nil {
			t.Fatal(err)
		}
		if est.Uncertainty >= prevSE {
			t.Errorf("n=%d: uncertainty %v is not below %v", n, est.Uncertainty, prevSE)
		}
		prevSE = est.Uncertainty
	}
}

// TestSufficiency: Rasch's raw score is sufficient, so collapsed counts, reordered items and the
// number-correct form all give the same standard and Bayes estimates as any response pattern.
func TestSufficiency(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	items := []Item{
		{ID: "a", Difficulty: 300}, {ID: "b", Difficulty: 500}, {ID: "c", Difficulty: 500},
		{ID: "d", Difficulty: 800}, {ID: "e", Difficulty: 1100},
	}
	patterns := [][]bool{
		{true, true, false, false, false},
		{false, false, false, true, true},
		{false, true, false, false, true},
	}
	prior := Normal{Mean: 650, SD: 150}
	collapsed := Test{Items: []Difficulty{{Measure: 1100, Count: 1}, {Measure: 500, Count: 2}, {Measure: 300, Count: 1}, {Measure: 800, Count: 1}}, Correct: 2}
	wantStd, err := f.Standard(collapsed)
	if err != nil {
		t.Fatal(err)
	}
	wantBayes, err := f.Bayes(collapsed, prior)
	if err != nil {
		t.Fatal(err)
	}
	for i, pat := range patterns {
		answers := make([]Answer, len(items))
		for j := range items {
			answers[j] = Answer{Item: items[j], Correct: pat[j]}
		}
		tt := TestOf(answers)
		std, err := f.Standard(tt)
		if err != nil {
			t.Fatal(err)
		}
		bay, err := f.Bayes(tt, prior)
		if err != nil {
			t.Fatal(err)
		}
		if !close(std, wantStd, 1e-6) || !close(bay, wantBayes, 1e-6) {
			t.Errorf("pattern %d: standard %v, bayes %v; want %v and %v (number-correct form)", i, std, bay, wantStd, wantBayes)
		}
	}
}

func close(a, b Estimate, tol float64) bool {
	return math.Abs(a.Ability-b.Ability) <= tol && math.Abs(a.Uncertainty-b.Uncertainty) <= tol
}

func TestEstimatorErrors(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	ok := []Difficulty{{Measure: 500, Count: 1}}
	cases := []struct {
		name  string
		test  Test
		prior Normal
		want  string
	}{
		{"empty", Test{}, Normal{500, 100}, "no items"},
		{"negative score", Test{Items: ok, Correct: -1}, Normal{500, 100}, "raw score -1 is outside [0, 1]"},
		{"score above n", Test{Items: ok, Correct: 2}, Normal{500, 100}, "raw score 2 is outside [0, 1]"},
		{"NaN difficulty", Test{Items: []Difficulty{{Measure: math.NaN(), Count: 1}}}, Normal{500, 100}, "not finite"},
		{"infinite difficulty", Test{Items: []Difficulty{{Measure: math.Inf(1), Count: 1}}}, Normal{500, 100}, "not finite"},
		{"zero count", Test{Items: []Difficulty{{Measure: 500, Count: 0}}}, Normal{500, 100}, "count 0 is below 1"},
		{"absurd count", Test{Items: []Difficulty{{Measure: 500, Count: math.MaxInt32}, {Measure: 600, Count: 5}}}, Normal{500, 100}, "more than 2^31 items"},
		{"absurd spread", Test{Items: []Difficulty{{Measure: -1e300, Count: 1}, {Measure: 1e300, Count: 1}}, Correct: 1}, Normal{500, 100}, "at most 400 logits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := f.Standard(c.test); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Standard error %v; want one containing %q", err, c.want)
			}
			if _, err := f.Bayes(c.test, c.prior); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Bayes error %v; want one containing %q", err, c.want)
			}
		})
	}
	for _, prior := range []Normal{{math.NaN(), 100}, {500, 0}, {500, -1}, {500, math.Inf(1)}, {1e300, 100}, {500, 1e300}} {
		if est, err := f.Bayes(Test{Items: ok, Correct: 1}, prior); err == nil {
			t.Errorf("Bayes with prior %v = %v, nil; want an error", prior, est)
		}
	}
	bad := *f
	bad.prep = nil
	bad.UnitsPerLogit = 0
	if _, err := bad.Standard(Test{Items: ok}); err == nil {
		t.Errorf("Standard on a framework with s = 0: nil error; want one")
	}
	if _, err := bad.Bayes(Test{Items: ok}, Normal{500, 100}); err == nil {
		t.Errorf("Bayes on a framework with s = 0: nil error; want one")
	}
	if !errors.Is(nil, nil) { // keep errors imported for readers of the table above
		t.Fatal()
	}
}

// accurateExcess is Σ P_i(θ) − r written with the public model's formula, counting the items a
// student almost surely gets right by their complement 1 − P = 1/(1 + e^z), so that the tails
// which place an estimate between far-apart clusters of items survive rounding.
func accurateExcess(f *Framework, items []Difficulty, theta, r float64) float64 {
	lambda := math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch))
	low, high, count := 0.0, 0.0, 0.0
	for _, d := range items {
		z := (theta-d.Measure)/f.UnitsPerLogit + lambda
		w := float64(d.Count)
		if z < 0 {
			low += w / (1 + math.Exp(-z))
		} else {
			high += w / (1 + math.Exp(z))
			count += w
		}
	}
	return (count - r) + (low - high)
}

// bisectAccurate solves accurateExcess = 0 by plain bisection.
func bisectAccurate(f *Framework, items []Difficulty, r float64) float64 {
	lo, hi := -1e5, 1e5
	for k := 0; k < 200 && hi-lo > 1e-9; k++ {
		mid := (lo + hi) / 2
		if accurateExcess(f, items, mid, r) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestStandardExtremes: long tests and items at ±10,000 (the services' limit), including scores
// that put the estimate on the flat stretch between two far-apart clusters, where Σ P_i rounds
// to r over thousands of units unless the near-certain items are counted by their complements.
// Where the clusters make it exact, the closed form is checked too: a items at −D and b at +D
// with r = a give θ̂ = −s·λ − (s/2)·ln(b/a) (up to terms in e^(−2D/s)).
func TestStandardExtremes(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	s, lambda := f.UnitsPerLogit, math.Log(3)
	closed := func(a, b float64) float64 { return -s*lambda - s/2*math.Log(b/a) }
	cases := []struct {
		name  string
		items []Difficulty
		r     int
		exact float64 // closed form, or NaN
	}{
		{"1000 items over ±10000, r=0", spread(1000, 0, 10000), 0, math.NaN()},
		{"1000 items over ±10000, r=1", spread(1000, 0, 10000), 1, math.NaN()},
		{"1000 items over ±10000, r=333", spread(1000, 0, 10000), 333, math.NaN()},
		{"1000 items over ±10000, r=999", spread(1000, 0, 10000), 999, math.NaN()},
		{"1000 items over ±10000, r=1000", spread(1000, 0, 10000), 1000, math.NaN()},
		{"one item at 10000, right", []Difficulty{{Measure: 10000, Count: 1}}, 1, math.NaN()},
		{"20 and 20 at ±10000, r=0", cycle(40, 2, -10000, 10000), 0, math.NaN()},
		{"20 and 20 at ±10000, r=20", cycle(40, 2, -10000, 10000), 20, closed(20, 20)},
		{"20 and 20 at ±10000, r=40", cycle(40, 2, -10000, 10000), 40, math.NaN()},
		{"500 and 500 at ±10000, r=500", []Difficulty{{Measure: -10000, Count: 500}, {Measure: 10000, Count: 500}}, 500, closed(500, 500)},
		{"1 and 999 at ±10000, r=1", []Difficulty{{Measure: -10000, Count: 1}, {Measure: 10000, Count: 999}}, 1, closed(1, 999)},
		{"999 and 1 at ±10000, r=999", []Difficulty{{Measure: -10000, Count: 999}, {Measure: 10000, Count: 1}}, 999, closed(999, 1)},
		{"-10000, 0, 10000, r=1", []Difficulty{{Measure: -10000, Count: 1}, {Measure: 0, Count: 1}, {Measure: 10000, Count: 1}}, 1, -5000 - s*lambda},
		{"-10000, 0, 10000, r=2", []Difficulty{{Measure: -10000, Count: 1}, {Measure: 0, Count: 1}, {Measure: 10000, Count: 1}}, 2, 5000 - s*lambda},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			est, err := f.Standard(Test{Items: c.items, Correct: c.r})
			if err != nil {
				t.Fatal(err)
			}
			if !finite(est.Ability) || !finite(est.Uncertainty) || est.Uncertainty <= 0 {
				t.Fatalf("Standard = %v; want a finite ability and a positive, finite uncertainty", est)
			}
			n := 0
			for _, d := range c.items {
				n += d.Count
			}
			r := float64(c.r)
			if c.r == 0 {
				r = f.ExtremeAdjust
			} else if c.r == n {
				r = float64(n) - f.ExtremeAdjust
			}
			want := bisectAccurate(f, c.items, r)
			if d := math.Abs(est.Ability-want) / s; !(d <= 1e-8) {
				t.Errorf("ability %v; want %v (bisection), %.2g logits apart", est.Ability, want, d)
			}
			if !math.IsNaN(c.exact) {
				if d := math.Abs(est.Ability-c.exact) / s; !(d <= 1e-8) {
					t.Errorf("ability %v; want %v (closed form), %.2g logits apart", est.Ability, c.exact, d)
				}
			}
		})
	}
}
