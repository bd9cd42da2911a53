package measure

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
)

// TestDemoGrowthNormsAreCurrent refits the demonstration growth norms from the generator's
// simulated cohorts and compares the result byte for byte with the committed file, so the
// committed norms are provably that fit; and the demo answers every model it should.
func TestDemoGrowthNormsAreCurrent(t *testing.T) {
	t.Parallel()
	want, err := DemoGrowthNorms(democontent.GrowthMeasures())
	if err != nil {
		t.Fatal(err)
	}
	got, err := demoFiles.ReadFile("demo/growth_norms.csv")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("demo/growth_norms.csv differs from the fit of the simulated cohorts (%v); run go generate ./pkg/measure", err)
	}
	if !strings.HasPrefix(string(got), "# SYNTHETIC") {
		t.Error("demo/growth_norms.csv is not labelled SYNTHETIC on its first line")
	}
	for _, fw := range []string{"lexile", "quantile"} {
		for g := 4; g <= 8; g++ {
			cur := Window{g, "EOY"}
			if _, ok := Demo().GrowthNorms(fw, cur, []Window{{g - 1, "EOY"}}); !ok {
				t.Errorf("demo lacks %s %s from grade %d", fw, cur, g-1)
			}
			_, ok := Demo().GrowthNorms(fw, cur, []Window{{g - 2, "EOY"}, {g - 1, "EOY"}})
			if want := g >= 5; ok != want {
				t.Errorf("demo %s %s from grades %d and %d: got %v; want %v", fw, cur, g-2, g-1, ok, want)
			}
		}
		if _, ok := Demo().GrowthNorms(fw, Window{9, "EOY"}, []Window{{8, "EOY"}}); ok {
			t.Errorf("demo has %s grade 9 norms; the cohorts end at grade 8", fw)
		}
	}
}

// simulateGrowth draws n students of a known growth model over three windows (grades 3, 4 and
// 5 EOY): a standing z moving as z' = ρz + √(1 − ρ²)e between years and measures
// 600 + 110·grade + 180·z, to whole units. Given the priors the current measure's conditional
// distribution is known, so growth percentiles on fresh students of the model are uniform.
func simulateGrowth(rng *rand.Rand, n int) (priors [][]float64, current []float64) {
	const rho = 0.8
	priors = [][]float64{make([]float64, n), make([]float64, n)}
	current = make([]float64, n)
	for i := 0; i < n; i++ {
		z := rng.NormFloat64()
		for g := 3; g <= 5; g++ {
			if g > 3 {
				z = rho*z + math.Sqrt(1-rho*rho)*rng.NormFloat64()
			}
			m := math.Round(600 + 110*float64(g) + 180*z)
			if g < 5 {
				priors[g-3][i] = m
			} else {
				current[i] = m
			}
		}
	}
	return priors, current
}

// TestGrowthCalibration fits norms on a cohort simulated from a known growth model and scores
// fresh students of the same model with them: each SGP decile must hold 10% ± 1.5 points of the
// students, for the one-prior and the two-prior model.
func TestGrowthCalibration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 6))
	fitPriors, fitCurrent := simulateGrowth(rng, 4000)
	priors, current := simulateGrowth(rng, 6000)
	for _, order := range []int{1, 2} {
		t.Run(fmt.Sprintf("order %d", order), func(t *testing.T) {
			t.Parallel()
			fit, err := FitGrowth(fitPriors[2-order:], fitCurrent, nil)
			if err != nil {
				t.Fatal(err)
			}
			var deciles [10]int
			pm := make([]float64, order)
			for i := range current {
				for k := range pm {
					pm[k] = priors[2-order+k][i]
				}
				q := fit.Model.Quantiles(pm)
				deciles[(SGP(&q, current[i])-1)/10]++
			}
			for d, n := range deciles {
				share := 100 * float64(n) / float64(len(current))
				if math.Abs(share-10) > 1.5 {
					t.Errorf("SGP decile %d holds %.2f%% of %d students; want 10 ± 1.5", d+1, share, len(current))
				}
			}
			t.Logf("deciles %v of %d", deciles, len(current))
		})
	}
}
