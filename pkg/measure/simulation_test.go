package measure

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSimulationStudy is docs/method.md §9's simulation: 2,000 students drawn from N(600, 180²)
// (one logit), 40 items evenly spread over ±2 logits around 600, responses drawn from the model.
func TestSimulationStudy(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	rng := rand.New(rand.NewPCG(2026, 11))
	const students = 2000
	pop := Normal{Mean: 600, SD: f.UnitsPerLogit}
	items := spread(40, pop.Mean, 2*f.UnitsPerLogit)
	var coverMLE, coverEAP int
	var sqMLE, sqEAP float64
	for i := 0; i < students; i++ {
		theta := pop.Mean + pop.SD*rng.NormFloat64()
		tt := Test{Items: items}
		for _, d := range items {
			if rng.Float64() < f.Probability(theta, d.Measure) {
				tt.Correct++
			}
		}
		std, err := f.Standard(tt)
		if err != nil {
			t.Fatal(err)
		}
		bay, err := f.Bayes(tt, pop)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(std.Ability-theta) <= 1.96*std.Uncertainty {
			coverMLE++
		}
		if math.Abs(bay.Ability-theta) <= 1.96*bay.Uncertainty {
			coverEAP++
		}
		sqMLE += (std.Ability - theta) * (std.Ability - theta)
		sqEAP += (bay.Ability - theta) * (bay.Ability - theta)
	}
	mle, eap := float64(coverMLE)/students, float64(coverEAP)/students
	rmseMLE, rmseEAP := math.Sqrt(sqMLE/students), math.Sqrt(sqEAP/students)
	t.Logf("95%% coverage: MLE %.3f, EAP %.3f; RMSE: MLE %.1f, EAP %.1f", mle, eap, rmseMLE, rmseEAP)
	if mle < 0.93 || mle > 0.97 {
		t.Errorf("MLE 95%% interval coverage %.3f; want 0.93-0.97", mle)
	}
	if eap < 0.94 || eap > 0.96 {
		t.Errorf("EAP 95%% interval coverage %.3f; want 0.94-0.96", eap)
	}
	if rmseEAP >= rmseMLE {
		t.Errorf("Bayes RMSE %.2f is not below the standard RMSE %.2f with the right prior", rmseEAP, rmseMLE)
	}
}

// TestForecastCalibration draws future scores from the growth model behind §7 (the prior's own
// error, the widening of §4 and the test's error, independent normals around the expected growth)
// for 100,000 students with varied priors and intervals, and checks that in every decile of
// forecast probability the observed share of each band is within 0.02 of the mean forecast.
func TestForecastCalibration(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	rng := rand.New(rand.NewPCG(7, 2026))
	const students = 100000
	const testSD = 40.0
	cuts := []float64{400, 800, 1100}
	type bin struct{ n, hits, forecast float64 }
	bins := make([][10]bin, len(cuts)+1)
	for i := 0; i < students; i++ {
		prior := Normal{Mean: -200 + 1700*rng.Float64(), SD: 20 + 130*rng.Float64()}
		days := 730 * rng.Float64()
		fc := f.Forecast(prior, days, testSD, cuts)

		now := prior.Mean + prior.SD*rng.NormFloat64()
		widening := math.Sqrt(f.GrowthSD * f.GrowthSD * days / daysPerYear)
		future := now + (f.Expected(prior.Mean, days) - prior.Mean) + widening*rng.NormFloat64()
		observed := future + testSD*rng.NormFloat64()
		band := 0
		for band < len(cuts) && observed >= cuts[band] {
			band++
		}
		for k, p := range fc.Probabilities {
			b := &bins[k][min(int(p*10), 9)]
			b.n++
			b.forecast += p
			if k == band {
				b.hits++
			}
		}
	}
	checked := 0
	for k := range bins {
		for d, b := range bins[k] {
			if b.n < 1000 {
				continue // too few students for a 0.02 tolerance to mean anything
			}
			checked++
			forecast, observed := b.forecast/b.n, b.hits/b.n
			if math.Abs(forecast-observed) > 0.02 {
				t.Errorf("band %d decile %d (%0.f students): forecast %.3f, observed %.3f", k, d, b.n, forecast, observed)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d band deciles had 1,000 students; want at least 30 checked", checked)
	}
}
