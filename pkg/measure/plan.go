package measure

import (
	"fmt"
	"math"
)

// MaxPlanDays is the longest horizon a plan searches (§14): ten years of days.
const MaxPlanDays = 3653

// PlanRequest is §14's question: a student measured at Prior, at school time Grade/TimeOfYear
// (BOY, MOY or EOY), and a Target measure to be reached with at least Probability.
// HorizonDays 0 means the default: the days to the end of grade 12, at most MaxPlanDays, at least 1.
type PlanRequest struct {
	Prior           Normal
	Grade           int
	TimeOfYear      string
	Target          float64
	Probability     float64
	TestUncertainty float64
	HorizonDays     int
}

// PlanPoint is the forecast of one day of a plan: Normal(Ability, Uncertainty²) and the
// probability of being at or above the target.
type PlanPoint struct {
	Grade       int
	TimeOfYear  string // on a reach, the window its day falls in (SchoolWindow); "" past grade 12
	ElapsedDays float64
	Ability     float64
	Uncertainty float64
	Probability float64
}

// Plan is §14's answer: the trajectory at every later MOY and EOY within the horizon (up to the
// end of grade 12, where school times end), and the first whole day the target is reached with
// the requested probability (nil: not within the horizon).
type Plan struct {
	Trajectory []PlanPoint
	Reach      *PlanPoint
	// Peak is the first whole day of the horizon with the highest probability (its Grade and
	// TimeOfYear unset): the best odds there are, which a plan never reached still has.
	Peak        PlanPoint
	HorizonDays int
}

// SchoolWindow is the school-year window of the day days after school time t0 (years, §4): the
// grade whose year it falls in and BOY, MOY or EOY, whichever of the year's beginning, middle and
// end is nearest: BOY from the year's beginning to a quarter year in, MOY to three quarters, EOY
// to the year's end, at which the next grade's BOY begins (the end of grade 12 is its EOY). ok is
// false past the end of grade 12, where school times end.
func SchoolWindow(t0, days float64) (grade int, timeOfYear string, ok bool) {
	t := t0 + days/daysPerYear
	if t > lastSchoolYear {
		return 0, "", false
	}
	g := math.Floor(t)
	switch frac := t - g; {
	case g == lastSchoolYear: // the very end of grade 12
		return lastSchoolYear - 1, "EOY", true
	case frac < 0.25:
		timeOfYear = "BOY"
	case frac < 0.75:
		timeOfYear = "MOY"
	default:
		timeOfYear = "EOY"
	}
	return int(g), timeOfYear, true
}

// schoolYears is the school time of a grade and time of year in years of the norm curve (§4).
func schoolYears(grade int, timeOfYear string) (float64, bool) {
	switch timeOfYear {
	case "BOY":
		return float64(grade), true
	case "MOY":
		return float64(grade) + 0.5, true
	case "EOY":
		return float64(grade) + 1, true
	}
	return 0, false
}

// lastSchoolYear is the end of grade 12 in years of the norm curve.
const lastSchoolYear = 13

// DefaultPlanDays is the horizon a plan searches when none is asked: the days from the measure's
// school time to the end of grade 12, rounded up so that the end of grade 12 is in the
// trajectory, at most MaxPlanDays, and at least 1 so that a measure taken at the very end of
// grade 12 still has a day to look at.
func DefaultPlanDays(grade int, timeOfYear string) int {
	t0, _ := schoolYears(grade, timeOfYear)
	d := int(math.Ceil((lastSchoolYear - t0) * daysPerYear))
	return min(max(d, 1), MaxPlanDays)
}

// Plan answers §14. Every figure is the single forecast (§7) of its day with the target as the
// one cut, from the same code path, so a point of the plan and /api/forecast of that elapsedDays
// agree bit for bit. p(d) need not be monotone in d (σ grows with d), so the reach is found by
// looking at every whole day, not by bisection.
func (f *Framework) Plan(req PlanRequest) (Plan, error) {
	if !f.HasNormCurve() {
		return Plan{}, fmt.Errorf("framework %q has no norm curve: a plan follows it", f.Name)
	}
	t0, ok := schoolYears(req.Grade, req.TimeOfYear)
	if !ok {
		return Plan{}, fmt.Errorf("time of year %q: want BOY, MOY or EOY", req.TimeOfYear)
	}
	horizon := req.HorizonDays
	if horizon == 0 {
		horizon = DefaultPlanDays(req.Grade, req.TimeOfYear)
	}
	if horizon < 1 || horizon > MaxPlanDays {
		return Plan{}, fmt.Errorf("horizon %d days: want 1 to %d", horizon, MaxPlanDays)
	}
	if !(req.Probability > 0 && req.Probability < 1) {
		return Plan{}, fmt.Errorf("probability %v: want strictly between 0 and 1", req.Probability)
	}
	prep, err := f.prepared()
	if err != nil {
		return Plan{}, err
	}
	// Forecast's own path (prepared.forecast), with the band probabilities in one reused buffer.
	cut, probs := []float64{req.Target}, make([]float64, 2)
	point := func(days float64) PlanPoint {
		mu, sigma := prep.forecast(f, req.Prior, days, req.TestUncertainty, cut, probs)
		return PlanPoint{ElapsedDays: days, Ability: mu, Uncertainty: sigma, Probability: probs[1]}
	}
	out := Plan{HorizonDays: horizon}
	// Half-year steps from the first MOY or EOY after t0; the BOY of grade g+1 is the EOY of
	// grade g, so it is never listed twice.
	for t := math.Floor(t0*2)/2 + 0.5; t <= lastSchoolYear; t += 0.5 {
		days := (t - t0) * daysPerYear
		if days > float64(horizon) {
			break
		}
		p := point(days)
		p.Grade, p.TimeOfYear = int(math.Ceil(t))-1, "EOY"
		if t != math.Floor(t) {
			p.Grade, p.TimeOfYear = int(math.Floor(t)), "MOY"
		}
		out.Trajectory = append(out.Trajectory, p)
	}
	// Every day is looked at for the peak; the reach is the first at the probability asked.
	out.Peak = point(0)
	for d := 0; d <= horizon; d++ {
		p := point(float64(d))
		if p.Probability > out.Peak.Probability {
			out.Peak = p
		}
		if out.Reach == nil && p.Probability >= req.Probability {
			reach := p
			if g, toy, ok := SchoolWindow(t0, p.ElapsedDays); ok {
				reach.Grade, reach.TimeOfYear = g, toy
			}
			out.Reach = &reach
		}
	}
	return out, nil
}
