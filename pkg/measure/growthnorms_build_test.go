package measure

import (
	"fmt"
	"strings"
	"testing"
)

// TestBuildGrowthNormsSkips: a model whose cohort is below the minimum, or whose prior takes too
// few distinct values for a spline, is reported with its n and reason, not fitted; the others
// are fitted. The minimum is inclusive.
func TestBuildGrowthNormsSkips(t *testing.T) {
	t.Parallel()
	var ms []GrowthMeasure
	add := func(fw, st string, g int, v float64) {
		ms = append(ms, GrowthMeasure{Framework: fw, Student: st, Window: Window{g, "EOY"}, Measure: v})
	}
	for i := 0; i < 400; i++ {
		st := fmt.Sprintf("s%03d", i)
		// lexile: grade 3 takes three values only; grade 4 spreads.
		add("lexile", st, 3, float64(500+100*(i%3)))
		add("lexile", st, 4, float64(520+i%97*3+i%7))
		// quantile: 350 students have grades 5 and 6.
		if i < 350 {
			add("quantile", st, 5, float64(600+i%89*2))
			add("quantile", st, 6, float64(640+i%89*2+i%13))
		}
	}
	for _, c := range []struct {
		min     int
		fitted  int
		reasons []string
	}{
		{350, 1, []string{"rank deficient"}},
		{351, 0, []string{"rank deficient", "350 students have all its windows; fewer than the minimum 351"}},
	} {
		t.Run(fmt.Sprint("min ", c.min), func(t *testing.T) {
			t.Parallel()
			rep, models, err := BuildGrowthNorms(ms, c.min, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(models) != c.fitted || len(rep.Models) != c.fitted || len(rep.Skipped) != len(c.reasons) {
				t.Fatalf("%d fitted, %d skipped; want %d and %d: %+v", len(models), len(rep.Skipped), c.fitted, len(c.reasons), rep.Skipped)
			}
			for k, want := range c.reasons {
				if s := rep.Skipped[k]; !strings.Contains(s.Reason, want) {
					t.Errorf("skipped[%d] %+v; want a reason containing %q", k, s, want)
				}
			}
			if s := rep.Skipped[0]; s.Framework != "lexile" || s.N != 400 || s.Current.Grade != 4 || len(s.Priors) != 1 || s.Priors[0].Grade != 3 {
				t.Errorf("skipped[0] %+v; want lexile grade 4 from grade 3, n 400", s)
			}
		})
	}
	if _, _, err := BuildGrowthNorms(ms, 0, nil); err == nil {
		t.Error("minimum 0: no error")
	}
}
