package measure

import "math"

// Domain limits: the largest values the method is used for here. The services answer a named 400
// beyond them, so that absurd inputs (an ability of 3·10⁹, a prior from 10²⁰ days ago) can neither
// overflow the arithmetic nor come back as confident-looking numbers.
const (
	// MaxAbsMeasure bounds abilities, difficulties and cut levels, in measure units. The
	// published scales span about -400 to 2000; ten thousand leaves room for any rescaling.
	MaxAbsMeasure = 10000
	// MaxUncertainty bounds prior uncertainties, test uncertainties and scale SEMs.
	MaxUncertainty = 10000
	// MaxElapsedDays is ten years: an older prior says nothing about a student today; score
	// without one.
	MaxElapsedDays = 3653
)

// Finite reports whether every value is a number (not NaN, not infinite): what a service checks
// an answer with before it goes on the wire.
func Finite(vs ...float64) bool {
	for _, v := range vs {
		if !finite(v) {
			return false
		}
	}
	return true
}

// CheckPrior reports through problem what is wrong with a prior as a request carries it (each
// value nil when absent; prefix is "" or an element path such as "studentData[3]."): a finite
// ability within MaxAbsMeasure, an uncertainty above 0 and at most MaxUncertainty, elapsed days
// from 0 to MaxElapsedDays. Fractional values are fine: a forecast's ability is the next request's
// prior. It reports whether all three are usable. Both services check priors with it, so a prior
// means the same wherever it is sent.
func CheckPrior(problem func(field, format string, args ...any), prefix string, ability, uncertainty, days *float64) bool {
	ok := true
	bad := func(field, format string, args ...any) {
		problem(prefix+field, format, args...)
		ok = false
	}
	switch {
	case ability == nil:
		bad("priorAbility", "is required")
	case !finite(*ability) || *ability < -MaxAbsMeasure || *ability > MaxAbsMeasure:
		bad("priorAbility", "must be a number between %d and %d, got %v", -MaxAbsMeasure, MaxAbsMeasure, *ability)
	}
	switch {
	case uncertainty == nil:
		bad("priorUncertainty", "is required")
	case !finite(*uncertainty) || *uncertainty <= 0 || *uncertainty > MaxUncertainty:
		bad("priorUncertainty", "must be greater than 0 and at most %d, got %v", MaxUncertainty, *uncertainty)
	}
	switch {
	case days == nil:
		bad("elapsedDays", "is required")
	case !finite(*days) || *days < 0 || *days > MaxElapsedDays:
		bad("elapsedDays", "must be between 0 and %d (ten years), got %v", MaxElapsedDays, *days)
	}
	return ok
}

// Reported is an estimate as the services answer it: inside what a request accepts as a prior
// (CheckPrior), so that every answer can be sent back as the next request's prior. An ability
// beyond ±MaxAbsMeasure is answered as that bound (it is far outside every published scale: the
// items said only "below" or "above" everything they measure); an uncertainty above
// MaxUncertainty as MaxUncertainty, and one that rounded to 0 as the smallest positive number (a
// posterior SD is never 0). A NaN stays a NaN, for the services' Finite check.
func Reported(est Estimate) Estimate {
	return Estimate{
		Ability:     min(max(est.Ability, -MaxAbsMeasure), MaxAbsMeasure),
		Uncertainty: min(max(est.Uncertainty, math.SmallestNonzeroFloat64), MaxUncertainty),
	}
}
