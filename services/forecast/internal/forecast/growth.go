package forecast

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// Growth is a student growth percentile (docs/method.md §15) from the bundle's growth norms:
// the model §15 chooses for the priors given, the student's 100 conditional quantiles, the SGP
// and the cuts asked.
func (s *Server) Growth(ctx context.Context, req *forecastv1.GrowthRequest) (*forecastv1.GrowthResponse, error) {
	var p rpcerr.Problems
	b := s.content.Bundle()
	fw := requiredFramework(&p, b, req.Framework)
	grade, toy := planSchoolTime(&p, req.Grade, req.TimeOfYear)
	current := measure.Window{Grade: grade, TimeOfYear: toy}
	ability := growthAbility(&p, "ability", req.Ability)
	// The priors are checked against the current window only when it is one: a grade out of range
	// (already a problem) would otherwise be compared as Kindergarten.
	currentOK := req.Grade != nil && req.GetGrade() >= 0 && req.GetGrade() <= 12 && toy != ""
	priors := growthPriors(&p, req.GetPriors(), current, currentOK)
	percentiles := growthPercentiles(&p, req.GetPercentiles())
	if err := p.Err(); err != nil {
		return nil, err
	}
	windows := make([]measure.Window, len(priors))
	for k, pr := range priors {
		windows[k] = pr.w
	}
	m, ok := b.GrowthModelFor(fw.Name, current, windows)
	if !ok {
		p.Add("priors", "%s", missingNorms(fw.Name, current, windows))
		return nil, p.Err()
	}
	// The model's priors are the latest len(m.Priors) given (older first).
	used := priors[len(priors)-m.Order():]
	pm := make([]float64, len(used))
	for k, pr := range used {
		pm[k] = pr.ability
	}
	q := m.Quantiles(pm)
	out := &forecastv1.GrowthResponse{
		Sgp:        int32(measure.SGP(&q, ability)),
		SgpOrder:   int32(m.Order()),
		Priors:     make([]*forecastv1.GrowthWindow, len(m.Priors)),
		Cuts:       make([]*forecastv1.GrowthCut, len(percentiles)),
		Framework:  fw.Name,
		ApiVersion: serve.Version,
	}
	for k, w := range m.Priors {
		out.Priors[k] = &forecastv1.GrowthWindow{Grade: int32(w.Grade), TimeOfYear: w.TimeOfYear}
	}
	for k, pc := range percentiles {
		cut := math.Floor(measure.Cut(&q, pc) + 0.5)
		if !measure.Finite(cut) {
			return nil, rpcerr.Fault(ctx, s.log, "growth cut is not finite", fmt.Errorf("percentile %d of %v", pc, q))
		}
		out.Cuts[k] = &forecastv1.GrowthCut{Percentile: int32(pc), Ability: cut, AbilityDisplay: fw.DisplayGrade(cut, grade)}
	}
	return out, nil
}

// growthPrior is a valid prior of a growth request.
type growthPrior struct {
	w       measure.Window
	ability float64
}

// growthAbility is a required measure within ±MaxAbsMeasure.
func growthAbility(p *rpcerr.Problems, field string, v *float64) float64 {
	switch {
	case v == nil:
		p.Add(field, "is required")
	case !measure.Finite(*v) || math.Abs(*v) > measure.MaxAbsMeasure:
		p.Add(field, "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, *v)
	default:
		return *v
	}
	return 0
}

// growthPriors checks the one or two priors (each of its own window, before the current one when
// that is known) and returns them older first.
func growthPriors(p *rpcerr.Problems, in []*forecastv1.GrowthPrior, current measure.Window, currentOK bool) []growthPrior {
	switch {
	case len(in) == 0:
		p.Add("priors", "is required: one or two earlier measures, each {grade, timeOfYear, ability}")
		return nil
	case len(in) > 2:
		p.Add("priors", "holds %d measures; want one or two", len(in))
		return nil
	}
	out := make([]growthPrior, 0, len(in))
	for i, pr := range in {
		field := fmt.Sprintf("priors[%d].", i)
		ok := true
		bad := func(f, format string, args ...any) {
			p.Add(field+f, format, args...)
			ok = false
		}
		g, toy := 0, ""
		switch v := pr.Grade; {
		case v == nil:
			bad("grade", "is required (0 for Kindergarten to 12)")
		case *v < 0 || *v > 12:
			bad("grade", "must be between 0 (Kindergarten) and 12, got %d", *v)
		default:
			g = int(*v)
		}
		if v := pr.TimeOfYear; v == nil {
			bad("timeOfYear", "is required (BOY, MOY or EOY)")
		} else if t, tok := measure.TimeOfYear(*v); tok {
			toy = t
		} else {
			bad("timeOfYear", "must be BOY, MOY or EOY, got %q", *v)
		}
		a := pr.GetAbility()
		switch v := pr.Ability; {
		case v == nil:
			bad("ability", "is required")
		case !measure.Finite(*v) || math.Abs(*v) > measure.MaxAbsMeasure:
			bad("ability", "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, *v)
		}
		if !ok {
			continue
		}
		w := measure.Window{Grade: g, TimeOfYear: toy}
		if currentOK && !w.Before(current) {
			p.Add(field[:len(field)-1], "%s is not before the current measure's %s", w, current)
			continue
		}
		if j := slices.IndexFunc(out, func(o growthPrior) bool { return o.w == w }); j >= 0 {
			p.Add(field[:len(field)-1], "repeats the window %s of another prior; priors are of different windows", w)
			continue
		}
		out = append(out, growthPrior{w: w, ability: a})
	}
	slices.SortFunc(out, func(a, b growthPrior) int {
		if a.w.Before(b.w) {
			return -1
		}
		return 1
	})
	return out
}

// growthPercentiles checks the percentiles asked: whole, 1 to 99, increasing.
func growthPercentiles(p *rpcerr.Problems, in []int32) []int {
	out := make([]int, len(in))
	for i, v := range in {
		switch {
		case v < 1 || v > 99:
			p.Add(fmt.Sprintf("percentiles[%d]", i), "must be between 1 and 99, got %d", v)
		case i > 0 && v <= in[i-1]:
			p.Add(fmt.Sprintf("percentiles[%d]", i), "%d does not follow %d; percentiles must increase", v, in[i-1])
		}
		out[i] = int(v)
	}
	return out
}

// missingNorms names the windows for which the bundle has no growth norms.
func missingNorms(framework string, current measure.Window, priors []measure.Window) string {
	latest := priors[len(priors)-1]
	msg := fmt.Sprintf("the content bundle has no %s growth norms for %s from %s", framework, current, latest)
	if len(priors) == 2 {
		msg += fmt.Sprintf(", nor from %s and %s", priors[0], priors[1])
	}
	return msg
}
