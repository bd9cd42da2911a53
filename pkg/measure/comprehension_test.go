package measure

import (
	"math"
	"testing"
)

func TestComprehensionRates(t *testing.T) {
	t.Parallel()
	logistic := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, c := range []struct {
		framework string
		ability   float64
		texts     []float64
		want      []float64
	}{
		// At match: the framework's success rate (lexile 75%, quantile 50%).
		{"lexile", 800, []float64{800}, []float64{0.75}},
		{"quantile", 800, []float64{800}, []float64{0.5}},
		// One logit (180 units) either way multiplies the odds at match (3:1 lexile) by e or 1/e.
		{"lexile", 800, []float64{620, 980}, []float64{logistic(1 + math.Log(3)), logistic(-1 + math.Log(3))}},
		{"quantile", -200, []float64{-380, -20}, []float64{logistic(1), logistic(-1)}},
		// Far apart: near 1 and near 0, never outside [0, 1].
		{"lexile", 1500, []float64{-400, 10000}, []float64{logistic(1900.0/180 + math.Log(3)), logistic(-8500.0/180 + math.Log(3))}},
		{"lexile", 800, nil, []float64{}},
	} {
		f := testFramework(t, c.framework)
		got := f.ComprehensionRates(c.ability, c.texts)
		if len(got) != len(c.want) {
			t.Fatalf("%s %v on %v: got %v; want %v", c.framework, c.ability, c.texts, got, c.want)
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-15 || got[i] < 0 || got[i] > 1 {
				t.Errorf("%s reader %v on text %v: got %v; want %v", c.framework, c.ability, c.texts[i], got[i], c.want[i])
			}
		}
	}
}
