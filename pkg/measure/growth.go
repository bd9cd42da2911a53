package measure

import "math"

// daysPerYear converts elapsed days to years of the norm curve (§4).
const daysPerYear = 365.25

// Expected is §4's expected measure after elapsedDays for a student now at ability: the student
// follows the norm curve shifted in time, t0 = N⁻¹(ability), so
// expected = ability + N(t0 + days/365.25) − N(t0). Growth is never negative; a negative or NaN
// elapsedDays counts as 0, and so does any without a norm curve (HasNormCurve).
func (f *Framework) Expected(ability, elapsedDays float64) float64 {
	p, err := f.prepared()
	if err != nil || !(elapsedDays > 0) {
		return ability
	}
	return p.expected(ability, elapsedDays)
}

func (p *prepared) expected(ability, days float64) float64 {
	if !(days > 0) || !finite(ability) || !p.hasCurve {
		return ability // no curve: no growth (services refuse elapsed days without one)
	}
	t0 := p.curve.inverse(ability)
	growth := p.curve.at(t0+days/daysPerYear) - p.curve.at(t0)
	return ability + math.Max(growth, 0) // rounding must not make growth negative
}

// Grow moves a prior forward by elapsedDays (§4): the mean by the expected growth, the variance
// widened by g² per year, τ² = min(σ0² + g²·days/365.25, max(σ0², P²)). The population SD P caps
// the widening only: a prior SD given above P stays as given (a vague prior, under which the Bayes
// estimate tends to the standard one), and a prior below P widens at most up to P.
func (f *Framework) Grow(prior Normal, elapsedDays float64) Normal {
	p, err := f.prepared()
	if err != nil {
		return prior
	}
	return p.grow(prior, elapsedDays, f.GrowthSD, f.PopulationSD)
}

func (p *prepared) grow(prior Normal, days, g, pop float64) Normal {
	if !(days > 0) {
		days = 0
	}
	v0 := prior.SD * prior.SD
	v := v0 + g*g*days/daysPerYear
	return Normal{Mean: p.expected(prior.Mean, days), SD: math.Sqrt(math.Min(v, math.Max(v0, pop*pop)))}
}
