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
//
// It is a GroupAccumulator fed every student in order, so a stream of the same students gives
// the same numbers, bit for bit: there is one code path for both.
func (f *Framework) Group(students []Student, testUncertainty float64, cuts []float64) GroupForecast {
	nb := len(cuts) + 1
	out := GroupForecast{
		Students:    make([]Forecast, len(students)),
		Proportions: make([]float64, nb),
		StdErrs:     make([]float64, nb),
	}
	all := make([]float64, len(students)*nb)
	// The accumulator sums straight into the result's slices: no second copy of the aggregates.
	var a GroupAccumulator // on the stack: Group allocates its result only
	f.initGroupAccumulator(&a, testUncertainty, cuts, out.Proportions, out.StdErrs)
	for i, s := range students {
		out.Students[i] = a.add(s, all[i*nb:(i+1)*nb:(i+1)*nb])
	}
	out.Ability, out.Uncertainty = a.finish(out.Proportions, out.StdErrs)
	return out
}

// GroupAccumulator is Group one student at a time, in memory that does not grow with the number
// of students: it keeps the running sums of §7 and nothing of the students it has seen. Fed the
// students of a Group call in the same order, it gives exactly Group's numbers (Group is built
// on it). It is not safe for concurrent use.
type GroupAccumulator struct {
	f       *Framework
	p       *prepared // nil when the framework cannot be prepared: students then count for nothing
	testSD  float64
	cuts    []float64
	n       int
	sumMu   float64
	sumVar  float64
	sumP    []float64 // Σ_i p_ik
	sumPQ   []float64 // Σ_i p_ik(1 − p_ik)
	entries int       // students added, including those of an unprepared framework
}

// NewGroupAccumulator starts an empty group of the given test uncertainty and ascending cuts
// (the cuts are copied).
func (f *Framework) NewGroupAccumulator(testUncertainty float64, cuts []float64) *GroupAccumulator {
	nb := len(cuts) + 1
	sums := make([]float64, 2*nb)
	a := new(GroupAccumulator)
	f.initGroupAccumulator(a, testUncertainty, append([]float64(nil), cuts...), sums[:nb:nb], sums[nb:])
	return a
}

// initGroupAccumulator makes *a an empty group summing into sumP and sumPQ (len(cuts)+1 zeros
// each), which the caller owns.
func (f *Framework) initGroupAccumulator(a *GroupAccumulator, testSD float64, cuts, sumP, sumPQ []float64) {
	*a = GroupAccumulator{f: f, testSD: testSD, cuts: cuts, sumP: sumP, sumPQ: sumPQ}
	if p, err := f.prepared(); err == nil {
		a.p = p
	}
}

// Add forecasts one student, counts it in the group and returns its entry of the group answer
// (what Group would have put in Students), with probabilities of its own.
func (a *GroupAccumulator) Add(s Student) Forecast {
	return a.add(s, make([]float64, len(a.cuts)+1))
}

// add is Add writing the probabilities into probs (len(cuts)+1).
func (a *GroupAccumulator) add(s Student, probs []float64) Forecast {
	a.entries++
	if a.p == nil {
		// As Forecast does for an unprepared framework: the prior, no probabilities, and (as
		// Group always did) zero aggregates.
		return Forecast{Ability: s.Prior.Mean, Uncertainty: s.Prior.SD, Probabilities: probs}
	}
	mu, sigma := a.p.forecast(a.f, s.Prior, s.ElapsedDays, a.testSD, a.cuts, probs)
	a.n++
	a.sumMu += mu
	a.sumVar += sigma * sigma
	for k, v := range probs {
		a.sumP[k] += v
		a.sumPQ[k] += v * (1 - v)
	}
	return Forecast{Ability: mu, Uncertainty: sigma, Probabilities: probs}
}

// Len is the number of students added.
func (a *GroupAccumulator) Len() int { return a.entries }

// Result is the group's aggregates so far (GroupForecast without Students, which the
// accumulator does not keep): zero aggregates for no students. Adding more students afterwards
// is allowed; Result then counts them too.
func (a *GroupAccumulator) Result() GroupForecast {
	nb := len(a.sumP)
	out := GroupForecast{Proportions: make([]float64, nb), StdErrs: make([]float64, nb)}
	out.Ability, out.Uncertainty = a.finish(out.Proportions, out.StdErrs)
	return out
}

// finish writes the per-band aggregates into props and stdErrs (which may be the running sums
// themselves, as in Group) and returns the group's ability and uncertainty.
func (a *GroupAccumulator) finish(props, stdErrs []float64) (ability, uncertainty float64) {
	if a.n == 0 {
		clear(props)
		clear(stdErrs)
		return 0, 0
	}
	n := float64(a.n)
	for k := range props {
		props[k] = a.sumP[k] / n
		stdErrs[k] = math.Sqrt(a.sumPQ[k]) / n
	}
	return a.sumMu / n, math.Sqrt(a.sumVar) / n
}
