package measure

import (
	"errors"
	"fmt"
	"math"
)

// Grades is the number of grades a framework describes: K (0) through 12.
const Grades = 13

// Framework holds one framework's calibration: the scale model (§1), display caps (§8), the norm
// curve and growth parameters (§4), the extreme-score adjustment (§2) and the strand prior (§6).
// Every number comes from the content bundle; the code holds no calibration constants.
//
// A Framework is read-only once prepared. The loader prepares bundle frameworks; a Framework built
// by hand must be passed to Prepare before use (an unprepared one still answers correctly, but
// recomputes its precomputations on every call).
type Framework struct {
	Name, Label, NegativePrefix   string    // the bundle's name, the display's unit label and prefix for values below 0
	Subject                       string    // forecast paths that serve it: "reading", "math" or "" (none)
	IDPrefixes                    []string  // when set, ids of the item-ids Bayes path start with one of these
	UnitsPerLogit, SuccessAtMatch float64   // s, m
	DisplayMin, DisplayMax        float64   // bottom and top display caps
	GradeMax                      []float64 // top display cap by grade 0..12
	Norm                          []float64 // norm-curve median by grade 0..12 at t = grade + 0.5 years; nil: no norm curve
	GrowthSD, PopulationSD        float64   // g (units per year^½) and P (units)
	ExtremeAdjust                 float64   // r' = adjust or n - adjust for zero and perfect scores
	StrandSpread                  float64   // SD of a strand's prior around the overall ability
	StrandNames                   []string  // declared strands, in bundle order

	prep *prepared
}

// prepared holds what every call would otherwise recompute.
type prepared struct {
	s, invS  float64 // units per logit and its inverse
	lambda   float64 // ln(m / (1 - m))
	curve    normCurve
	hasCurve bool
}

// Prepare validates the framework's parameters and precomputes the norm curve. It must be called
// once, before the framework is shared between goroutines.
func (f *Framework) Prepare() error {
	p, err := f.build()
	if err != nil {
		return err
	}
	f.prep = p
	return nil
}

// prepared returns the precomputations, building them afresh for an unprepared framework.
func (f *Framework) prepared() (*prepared, error) {
	if f.prep != nil {
		return f.prep, nil
	}
	return f.build()
}

func (f *Framework) build() (*prepared, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if f.Name == "" {
		bad("framework name is empty")
	}
	if f.Label == "" {
		bad("label is empty")
	}
	if f.NegativePrefix == "" {
		bad("negative prefix is empty")
	}
	open := func(name string, v, lo, hi float64) {
		if !(v > lo && v < hi) {
			bad("%s %v is outside (%v, %v)", name, v, lo, hi)
		}
	}
	inf := math.Inf(1)
	open("unitsPerLogit", f.UnitsPerLogit, 0, inf)
	open("successAtMatch", f.SuccessAtMatch, 0, 1)
	open("populationSD", f.PopulationSD, 0, inf)
	open("extremeAdjust", f.ExtremeAdjust, 0, 0.5)
	open("strandSpread", f.StrandSpread, 0, inf)
	if !(f.GrowthSD >= 0 && f.GrowthSD < inf) { // g = 0 is allowed: no widening
		bad("growthSD %v is not a finite value >= 0", f.GrowthSD)
	}
	if !finite(f.DisplayMin) || !finite(f.DisplayMax) || f.DisplayMin >= f.DisplayMax {
		bad("display caps [%v, %v] are not a finite ascending pair", f.DisplayMin, f.DisplayMax)
	}
	if len(f.GradeMax) != Grades {
		bad("%d grade caps; want %d (K-12)", len(f.GradeMax), Grades)
	} else {
		for g, v := range f.GradeMax {
			if !finite(v) || v <= f.DisplayMin {
				bad("grade %d cap %v is not a finite value above the bottom cap %v", g, v, f.DisplayMin)
			}
		}
	}
	var curve normCurve
	switch {
	case len(f.Norm) == 0: // no norm curve: growth, forecasts and grade priors are not available
	case len(f.Norm) != Grades:
		bad("%d norm-curve medians; want %d (K-12) or none", len(f.Norm), Grades)
	default:
		if err := curve.fit(f.Norm); err != nil {
			bad("norm curve: %w", err)
		}
	}
	if f.Subject != "" && f.Subject != SubjectReading && f.Subject != SubjectMath {
		bad("subject %q is not %q, %q or empty", f.Subject, SubjectReading, SubjectMath)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("framework %q: %w", f.Name, errors.Join(errs...))
	}
	return &prepared{
		s:        f.UnitsPerLogit,
		invS:     1 / f.UnitsPerLogit,
		lambda:   math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch)),
		curve:    curve,
		hasCurve: len(f.Norm) > 0,
	}, nil
}

// Subjects of the forecast paths: a framework with subject reading answers /api/forecast/reading…,
// one with math /api/forecast/math…; a bundle has at most one framework a subject.
const (
	SubjectReading = "reading"
	SubjectMath    = "math"
)

// HasNormCurve reports whether the framework has a norm curve (grades.csv rows), which growing a
// prior over elapsed days, forecasts, plans and grade-based priors need.
func (f *Framework) HasNormCurve() bool { return len(f.Norm) > 0 }

// Probability is the scale model of §1: the chance that a student at ability answers an item of
// difficulty correctly (both in measure units). It is NaN only for a framework whose parameters
// fail Prepare.
func (f *Framework) Probability(ability, difficulty float64) float64 {
	p, err := f.prepared()
	if err != nil {
		return math.NaN()
	}
	return 1 / (1 + math.Exp(-((ability-difficulty)*p.invS + p.lambda)))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
