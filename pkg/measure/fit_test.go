package measure

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func answersOf(diffs []float64, right string) []Answer {
	out := make([]Answer, len(diffs))
	for i, d := range diffs {
		out[i] = Answer{Item: Item{Difficulty: d}, Correct: right[i] == '1'}
	}
	return out
}

// plainFit is §12's formulas written the plain way, with P from Framework.Probability.
func plainFit(f *Framework, theta float64, answers []Answer) PersonFit {
	var sumOut, sumSq, sumW, sumCW2, sumCmW float64
	n := float64(len(answers))
	for _, a := range answers {
		p := f.Probability(theta, a.Item.Difficulty)
		x := 0.0
		if a.Correct {
			x = 1
		}
		w := p * (1 - p)
		c := p*math.Pow(1-p, 4) + (1-p)*math.Pow(p, 4)
		sumOut += (x - p) * (x - p) / w
		sumSq += (x - p) * (x - p)
		sumW += w
		sumCW2 += c / (w * w)
		sumCmW += c - w*w
	}
	pf := PersonFit{Outfit: sumOut / n, Infit: sumSq / sumW}
	qOut := math.Sqrt(sumCW2/(n*n) - 1/n)
	qIn := math.Sqrt(sumCmW / (sumW * sumW))
	pf.OutfitZ = (math.Pow(pf.Outfit, 1.0/3)-1)*(3/qOut) + qOut/3
	pf.InfitZ = (math.Pow(pf.Infit, 1.0/3)-1)*(3/qIn) + qIn/3
	return pf
}

func TestPersonFitFormulas(t *testing.T) {
	t.Parallel()
	diffs := []float64{200, 350, 500, 650, 800, 950}
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		for _, c := range []struct {
			name    string
			theta   float64
			pattern string
		}{
			{"one right", 300, "100000"},
			{"one wrong", 900, "111110"},
			{"Guttman", 600, "111000"},
			{"reversed", 600, "000111"},
			{"mixed", 575.5, "101010"},
			{"far above", 1800, "011111"},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				a := answersOf(diffs, c.pattern)
				got, err := f.PersonFit(c.theta, a)
				if err != nil {
					t.Fatal(err)
				}
				want := plainFit(f, c.theta, a)
				for _, v := range [][3]any{{"infit", got.Infit, want.Infit}, {"outfit", got.Outfit, want.Outfit},
					{"infitZ", got.InfitZ, want.InfitZ}, {"outfitZ", got.OutfitZ, want.OutfitZ}} {
					g, w := v[1].(float64), v[2].(float64)
					if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
						t.Errorf("%s: got %v; want %v", v[0], g, w)
					}
				}
				if got.Flag != FitFlag(got.InfitZ, got.OutfitZ) {
					t.Errorf("flag %q; want %q", got.Flag, FitFlag(got.InfitZ, got.OutfitZ))
				}
			})
		}
	}
}

// TestPersonFitOrdering: the Guttman pattern (easy right, hard wrong) fits better than the model
// expects (overfit), the reversed pattern far worse (misfit).
func TestPersonFitOrdering(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	diffs := spread(40, 600, 360)
	ds := make([]float64, len(diffs))
	for i, d := range diffs {
		ds[i] = d.Measure
	}
	guttman, reversed := "", ""
	for i := range ds {
		if i < 20 {
			guttman, reversed = guttman+"1", reversed+"0"
		} else {
			guttman, reversed = guttman+"0", reversed+"1"
		}
	}
	for _, c := range []struct{ pattern, flag string }{{guttman, OverfitFlag}, {reversed, MisfitFlag}} {
		a := answersOf(ds, c.pattern)
		est, err := f.Standard(TestOf(a))
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.PersonFit(est.Ability, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.Flag != c.flag {
			t.Errorf("pattern %s: flag %q (infitZ %.2f, outfitZ %.2f); want %q", c.pattern, got.Flag, got.InfitZ, got.OutfitZ, c.flag)
		}
	}
}

func TestPersonFitExtremes(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	diffs := []float64{400, 500, 600}
	for _, c := range []struct {
		pattern string
		extreme bool
	}{{"000", true}, {"100", false}, {"110", false}, {"111", true}} {
		t.Run(c.pattern, func(t *testing.T) {
			t.Parallel()
			got, err := f.PersonFit(500, answersOf(diffs, c.pattern))
			if c.extreme {
				if !errors.Is(err, ErrExtremeScore) || got != (PersonFit{}) {
					t.Errorf("got %+v, %v; want no figures and ErrExtremeScore", got, err)
				}
				return
			}
			if err != nil || !finite(got.Infit) || !finite(got.OutfitZ) {
				t.Errorf("got %+v, %v; want finite figures", got, err)
			}
		})
	}
}

func TestPersonFitRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	for _, c := range []struct {
		name    string
		ability float64
		answers []Answer
	}{
		{"no answers", 500, nil},
		{"NaN ability", math.NaN(), answersOf([]float64{1, 2}, "10")},
		{"infinite ability", math.Inf(1), answersOf([]float64{1, 2}, "10")},
		{"NaN difficulty", 500, answersOf([]float64{1, math.NaN()}, "10")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := f.PersonFit(c.ability, c.answers); err == nil || errors.Is(err, ErrExtremeScore) {
				t.Errorf("got err %v; want an input error", err)
			}
		})
	}
	// Far from the items 1 − P is computed directly (not as 1 − P, which rounds to 0): the
	// figures stay finite and huge rather than dividing by zero.
	far, err := f.PersonFit(1e4, answersOf([]float64{-1e4, 0, 1e4}, "011"))
	if err != nil || !finite(far.Infit) || !finite(far.OutfitZ) || far.Flag != MisfitFlag {
		t.Errorf("far from the items: got %+v, %v; want finite figures flagged misfit", far, err)
	}
	if _, err := (&Framework{Name: "broken"}).PersonFit(500, answersOf([]float64{1, 2}, "10")); err == nil {
		t.Error("an invalid framework gave no error")
	}
}

func TestFitFlag(t *testing.T) {
	t.Parallel()
	above := math.Nextafter(1.96, 2)
	below := math.Nextafter(-1.96, -2)
	for _, c := range []struct {
		in, out float64
		want    string
	}{
		{0, 0, ""},
		{1.96, 1.96, ""},
		{-1.96, -1.96, ""},
		{above, 0, MisfitFlag},
		{0, above, MisfitFlag},
		{below, 0, OverfitFlag},
		{0, below, OverfitFlag},
		{above, below, MisfitFlag},
		{below, above, MisfitFlag},
	} {
		if got := FitFlag(c.in, c.out); got != c.want {
			t.Errorf("FitFlag(%v, %v) = %q; want %q", c.in, c.out, got, c.want)
		}
	}
	if FitCut != 1.96 || MisfitFlag != "misfit" || OverfitFlag != "overfit" {
		t.Errorf("FitCut %v, flags %q %q; want 1.96, misfit, overfit", FitCut, MisfitFlag, OverfitFlag)
	}
}

// TestPersonFitSimulation is §12's simulation: 40 items evenly over ±2 logits, 4,000 students
// from N(600, 180²), each measured by MLE (its own θ̂). Patterns drawn from the model are flagged
// 3.4% of the time (either statistic, either side; not the 1% one might expect); the same
// students guessing (right with chance 1/4) on the hardest third 14.7%, four times as often.
// docs/method.md quotes both rates.
func TestPersonFitSimulation(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	rng := rand.New(rand.NewPCG(2026, 12))
	const students = 4000
	items := spread(40, 600, 2*f.UnitsPerLogit)
	hard := items[len(items)-len(items)/3].Measure
	rate := func(guess bool) (flagged, scored int) {
		for i := 0; i < students; i++ {
			theta := 600 + f.UnitsPerLogit*rng.NormFloat64()
			a := make([]Answer, len(items))
			for k, d := range items {
				p := f.Probability(theta, d.Measure)
				if guess && d.Measure >= hard {
					p = 0.25
				}
				a[k] = Answer{Item: Item{Difficulty: d.Measure}, Correct: rng.Float64() < p}
			}
			est, err := f.Standard(TestOf(a))
			if err != nil {
				t.Fatal(err)
			}
			pf, err := f.PersonFit(est.Ability, a)
			if errors.Is(err, ErrExtremeScore) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			scored++
			if pf.Flag == MisfitFlag || pf.Flag == OverfitFlag {
				flagged++
			}
		}
		return flagged, scored
	}
	mf, mn := rate(false)
	gf, gn := rate(true)
	model, guess := float64(mf)/float64(mn), float64(gf)/float64(gn)
	t.Logf("flagged: model %d/%d = %.2f%%, guessing on the hardest third %d/%d = %.2f%%", mf, mn, 100*model, gf, gn, 100*guess)
	if model < 0.01 || model > 0.06 {
		t.Errorf("model patterns flagged %.2f%%; want 1-6%%", 100*model)
	}
	if guess < 3*model {
		t.Errorf("guessing patterns flagged %.2f%%; want at least 3 times the model's %.2f%%", 100*guess, 100*model)
	}
}
