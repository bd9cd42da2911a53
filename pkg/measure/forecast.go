package measure

import "math"

// Forecast is one student's forecast (§7): the future measure ~ Normal(Ability, Uncertainty²)
// and the probability of each band the cuts make.
type Forecast struct {
	Ability, Uncertainty float64
	Probabilities        []float64
}

// Student is one entry of a group forecast.
type Student struct {
	Prior       Normal
	ElapsedDays float64
}

// GroupForecast is §7's group result: every student's forecast in input order, the group mean
// ability and its uncertainty, and per band the expected proportion and its standard error.
type GroupForecast struct {
	Students             []Forecast
	Ability, Uncertainty float64
	Proportions, StdErrs []float64
}

// Forecast is §7: μ = Expected(prior.Mean, elapsedDays), σ² = τ² + testUncertainty² with τ from
// Grow, and for K ascending cuts the K+1 band probabilities P(X < c1), P(c1 ≤ X < c2), …,
// P(X ≥ cK), computed from erfc tails so that small probabilities keep full relative precision,
// each ≥ 0 and summing to 1 within 1e-15.
func (f *Framework) Forecast(prior Normal, elapsedDays, testUncertainty float64, cuts []float64) Forecast {
	p, err := f.prepared()
	if err != nil {
		return Forecast{Ability: prior.Mean, Uncertainty: prior.SD, Probabilities: make([]float64, len(cuts)+1)}
	}
	out := Forecast{Probabilities: make([]float64, len(cuts)+1)}
	out.Ability, out.Uncertainty = p.forecast(f, prior, elapsedDays, testUncertainty, cuts, out.Probabilities)
	return out
}

// forecast writes the band probabilities into probs (len(cuts)+1) and returns μ and σ.
func (p *prepared) forecast(f *Framework, prior Normal, days, testSD float64, cuts, probs []float64) (mu, sigma float64) {
	g := p.grow(prior, days, f.GrowthSD, f.PopulationSD)
	sigma = math.Sqrt(g.SD*g.SD + testSD*testSD)
	bands(g.Mean, sigma, cuts, probs)
	return g.Mean, sigma
}

// bands fills probs with the normal band probabilities. Each cut gets one erfc, for the tail on
// its own side of the mean (the small one, kept to full relative precision); the other tail is
// its complement. A band is then a difference of two small tails on one side of the mean, or one
// minus the two outer tails, so no small probability is the difference of two numbers near 1.
// The result is normalised to sum to 1 up to rounding.
func bands(mu, sigma float64, cuts, probs []float64) {
	k := len(cuts)
	if k == 0 {
		probs[0] = 1
		return
	}
	// lo = P(X < c), hi = P(X ≥ c).
	tails := func(c float64) (lo, hi float64) {
		zc := z(c, mu, sigma)
		if zc <= 0 {
			lo = 0.5 * math.Erfc(-zc/math.Sqrt2)
			return lo, 1 - lo
		}
		hi = 0.5 * math.Erfc(zc/math.Sqrt2)
		return 1 - hi, hi
	}
	loA, hiA := tails(cuts[0])
	probs[0] = loA
	for i := 1; i < k; i++ {
		loB, hiB := tails(cuts[i])
		var v float64
		switch {
		case cuts[i] <= mu:
			v = loB - loA
		case cuts[i-1] >= mu:
			v = hiA - hiB
		default:
			v = 1 - loA - hiB
		}
		probs[i] = math.Max(v, 0)
		loA, hiA = loB, hiB
	}
	probs[k] = hiA
	sum := 0.0
	for _, v := range probs {
		sum += v
	}
	for i := range probs {
		probs[i] /= sum
	}
}

// z is the standard score of c, with a zero sigma treated as a point mass at mu (X ≥ c iff mu ≥ c).
func z(c, mu, sigma float64) float64 {
	if sigma > 0 {
		return (c - mu) / sigma
	}
	if c > mu {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// Group is §7's group forecast: each student's Forecast, groupAbility = mean μ_i,
// groupUncertainty = √(Σσ_i²)/n, and per band the proportion mean_i p_ik with standard error
// √(Σ_i p_ik(1 − p_ik))/n. It allocates the result slices only (one backing array for every
// student's probabilities). An empty group gives zero aggregates.
func (f *Framework) Group(students []Student, testUncertainty float64, cuts []float64) GroupForecast {
	nb := len(cuts) + 1
	out := GroupForecast{
		Students:    make([]Forecast, len(students)),
		Proportions: make([]float64, nb),
		StdErrs:     make([]float64, nb),
	}
	all := make([]float64, len(students)*nb)
	p, err := f.prepared()
	if err != nil || len(students) == 0 {
		for i, s := range students {
			out.Students[i] = Forecast{Ability: s.Prior.Mean, Uncertainty: s.Prior.SD, Probabilities: all[i*nb : (i+1)*nb : (i+1)*nb]}
		}
		return out
	}
	var sumMu, sumVar float64
	for i, s := range students {
		probs := all[i*nb : (i+1)*nb : (i+1)*nb]
		mu, sigma := p.forecast(f, s.Prior, s.ElapsedDays, testUncertainty, cuts, probs)
		out.Students[i] = Forecast{Ability: mu, Uncertainty: sigma, Probabilities: probs}
		sumMu += mu
		sumVar += sigma * sigma
		for k, v := range probs {
			out.Proportions[k] += v
			out.StdErrs[k] += v * (1 - v)
		}
	}
	n := float64(len(students))
	out.Ability = sumMu / n
	out.Uncertainty = math.Sqrt(sumVar) / n
	for k := range out.Proportions {
		out.Proportions[k] /= n
		out.StdErrs[k] = math.Sqrt(out.StdErrs[k]) / n
	}
	return out
}
