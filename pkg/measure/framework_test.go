package measure

import (
	"math"
	"strings"
	"testing"
)

func TestPrepareRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		breakf func(f *Framework)
		want   string
	}{
		{"no name", func(f *Framework) { f.Name = "" }, "framework name is empty"},
		{"no label", func(f *Framework) { f.Label = "" }, "label is empty"},
		{"no prefix", func(f *Framework) { f.NegativePrefix = "" }, "negative prefix is empty"},
		{"s = 0", func(f *Framework) { f.UnitsPerLogit = 0 }, "unitsPerLogit 0 is outside"},
		{"m = 1", func(f *Framework) { f.SuccessAtMatch = 1 }, "successAtMatch 1 is outside"},
		{"P < 0", func(f *Framework) { f.PopulationSD = -1 }, "populationSD -1"},
		{"adjust 0.5", func(f *Framework) { f.ExtremeAdjust = 0.5 }, "extremeAdjust 0.5"},
		{"spread 0", func(f *Framework) { f.StrandSpread = 0 }, "strandSpread 0"},
		{"g < 0", func(f *Framework) { f.GrowthSD = -3 }, "growthSD -3"},
		{"caps reversed", func(f *Framework) { f.DisplayMin = 2000 }, "display caps"},
		{"short caps", func(f *Framework) { f.GradeMax = f.GradeMax[:12] }, "12 grade caps; want 13"},
		{"grade cap below bottom", func(f *Framework) { f.GradeMax = append([]float64{-500}, f.GradeMax[1:]...) }, "grade 0 cap -500"},
		{"short norm", func(f *Framework) { f.Norm = f.Norm[:3] }, "3 norm-curve medians"},
		{"flat norm", func(f *Framework) {
			f.Norm = append([]float64{}, f.Norm...)
			f.Norm[5] = f.Norm[4]
		}, "grade 5 median 628 is not above grade 4 median 628"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := *testFramework(t, "lexile")
			f.prep = nil
			c.breakf(&f)
			err := f.Prepare()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Prepare error %v; want one containing %q", err, c.want)
			}
			if f.Display(500) != "500L" && c.name != "no label" && c.name != "caps reversed" {
				t.Errorf("Display on an invalid framework = %q", f.Display(500))
			}
			if got := f.Expected(500, 100); got != 500 {
				t.Errorf("Expected on an invalid framework = %v; want the ability unchanged", got)
			}
			if got := f.Grow(Normal{500, 50}, 100); got != (Normal{500, 50}) {
				t.Errorf("Grow on an invalid framework = %v; want the prior unchanged", got)
			}
			if got := f.Forecast(Normal{500, 50}, 100, 0, []float64{1}); len(got.Probabilities) != 2 {
				t.Errorf("Forecast on an invalid framework = %v; want 2 bands", got)
			}
			if got := f.Group([]Student{{Prior: Normal{500, 50}}}, 0, []float64{1}); len(got.Students) != 1 {
				t.Errorf("Group on an invalid framework = %v; want 1 student", got)
			}
		})
	}
}

// TestUnpreparedFramework: a hand-built framework answers the same before and after Prepare.
func TestUnpreparedFramework(t *testing.T) {
	t.Parallel()
	prepared := testFramework(t, "lexile")
	raw := *prepared
	raw.prep = nil
	tt := Test{Items: spread(20, 500, 300), Correct: 12}
	a, _ := prepared.Standard(tt)
	b, _ := raw.Standard(tt)
	if a != b || prepared.Expected(500, 90) != raw.Expected(500, 90) {
		t.Errorf("unprepared framework answers %v; prepared %v", b, a)
	}
	if p := raw.Probability(500, 500); math.Abs(p-0.75) > 1e-15 {
		t.Errorf("Probability at match = %v; want 0.75", p)
	}
}

// TestDemoFrameworksMatchMethod: the demo bundle carries docs/method.md's defaults.
func TestDemoFrameworksMatchMethod(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		want := testFramework(t, name)
		got, ok := Demo().Framework(name)
		if !ok {
			t.Fatalf("demo has no %s", name)
		}
		if got.Label != want.Label || got.NegativePrefix != want.NegativePrefix || got.UnitsPerLogit != want.UnitsPerLogit ||
			got.SuccessAtMatch != want.SuccessAtMatch || got.DisplayMin != want.DisplayMin || got.DisplayMax != want.DisplayMax ||
			got.GrowthSD != want.GrowthSD || got.PopulationSD != want.PopulationSD || got.ExtremeAdjust != want.ExtremeAdjust ||
			got.StrandSpread != want.StrandSpread {
			t.Errorf("demo %s = %+v; want %+v", name, got, want)
		}
		for g := 0; g < Grades; g++ {
			if got.Norm[g] != want.Norm[g] || got.GradeMax[g] != want.GradeMax[g] {
				t.Errorf("demo %s grade %d: norm %v cap %v; want %v and %v", name, g, got.Norm[g], got.GradeMax[g], want.Norm[g], want.GradeMax[g])
			}
		}
	}
}
