package forecast

import (
	"context"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// defaultPlanProbability is the probability of being at or above the target that counts as
// reaching it when the request names none: even odds.
const defaultPlanProbability = 0.5

// Plan is the growth planner (docs/method.md §14): the forecast at every later school time and
// the first day the target is reached, all from measure.Framework.Plan, which computes each
// figure on the single forecast's own path.
func (s *Server) Plan(ctx context.Context, req *forecastv1.PlanRequest) (*forecastv1.PlanResponse, error) {
	var p rpcerr.Problems
	fw := requiredFramework(&p, s.content.Bundle(), req.Framework)
	if fw != nil && !fw.HasNormCurve() {
		p.Add("framework", "the bundle has no norm curve for framework %q, so plans are not available", fw.Name)
	}
	measure.CheckPrior(p.Add, "", req.PriorAbility, req.PriorUncertainty, new(0.0))
	grade, toy := planSchoolTime(&p, req.Grade, req.TimeOfYear)
	switch v := req.Target; {
	case v == nil:
		p.Add("target", "is required (the measure to reach)")
	case !measure.Finite(*v) || math.Abs(*v) > measure.MaxAbsMeasure:
		p.Add("target", "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, *v)
	}
	probability := defaultPlanProbability
	if v := req.Probability; v != nil {
		if !(*v > 0 && *v < 1) {
			p.Add("probability", "must be strictly between 0 and 1, got %v", *v)
		}
		probability = *v
	}
	testSD := 0.0
	if req.TestUncertainty != nil {
		testSD = s.testUncertainty(&p, req.TestUncertainty)
	}
	horizon := 0
	if v := req.HorizonDays; v != nil {
		if *v < 1 || *v > measure.MaxPlanDays {
			p.Add("horizonDays", "must be between 1 and %d, got %d", measure.MaxPlanDays, *v)
		}
		horizon = int(*v)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	plan, err := fw.Plan(measure.PlanRequest{
		Prior: measure.Normal{Mean: *req.PriorAbility, SD: *req.PriorUncertainty},
		Grade: grade, TimeOfYear: toy, Target: *req.Target, Probability: probability,
		TestUncertainty: testSD, HorizonDays: horizon,
	})
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "plan refused a validated request", err)
	}
	out := &forecastv1.PlanResponse{
		Trajectory: make([]*forecastv1.PlanPoint, len(plan.Trajectory)),
		Framework:  fw.Name,
		ApiVersion: serve.Version,
	}
	for i, pt := range plan.Trajectory {
		if !measure.Finite(pt.Ability, pt.Uncertainty, pt.Probability) {
			return nil, rpcerr.Fault(ctx, s.log, "plan is not finite", fmt.Errorf("%+v", pt))
		}
		rep := measure.Reported(measure.Estimate{Ability: pt.Ability, Uncertainty: pt.Uncertainty})
		out.Trajectory[i] = &forecastv1.PlanPoint{
			Grade: int32(pt.Grade), TimeOfYear: pt.TimeOfYear, ElapsedDays: pt.ElapsedDays,
			Ability: rep.Ability, AbilityDisplay: fw.DisplayGrade(rep.Ability, pt.Grade),
			Uncertainty: rep.Uncertainty, Probability: pt.Probability,
		}
	}
	if r := plan.Reach; r != nil {
		if !measure.Finite(r.Ability, r.Uncertainty, r.Probability) {
			return nil, rpcerr.Fault(ctx, s.log, "plan is not finite", fmt.Errorf("%+v", r))
		}
		rep := measure.Reported(measure.Estimate{Ability: r.Ability, Uncertainty: r.Uncertainty})
		out.Reach = &forecastv1.PlanReach{
			ElapsedDays: r.ElapsedDays, Ability: rep.Ability, AbilityDisplay: fw.Display(rep.Ability),
			Uncertainty: rep.Uncertainty, Probability: r.Probability,
		}
		if r.TimeOfYear != "" { // past the end of grade 12 the day has no school window
			out.Reach.Grade, out.Reach.TimeOfYear = proto.Int32(int32(r.Grade)), proto.String(r.TimeOfYear)
		}
	}
	if !measure.Finite(plan.Peak.Probability) {
		return nil, rpcerr.Fault(ctx, s.log, "plan is not finite", fmt.Errorf("peak %+v", plan.Peak))
	}
	out.Peak = &forecastv1.PlanPeak{ElapsedDays: plan.Peak.ElapsedDays, Probability: plan.Peak.Probability}
	return out, nil
}

// requiredFramework is a required framework field, its name matched in any case (the
// comprehension rates and the plan take it).
func requiredFramework(p *rpcerr.Problems, b *measure.Bundle, name *string) *measure.Framework {
	if name == nil {
		p.Add("framework", "is required (%s)", b.FrameworkList())
		return nil
	}
	fw, ok := b.Framework(strings.ToLower(strings.TrimSpace(*name)))
	if !ok {
		p.Add("framework", "unknown framework %q (want %s)", *name, b.FrameworkList())
	}
	return fw
}

// planSchoolTime is the required grade and time of year the measure was taken at; the time of
// year in any case (measure.TimeOfYear, as on every path that takes one).
func planSchoolTime(p *rpcerr.Problems, grade *int32, timeOfYear *string) (int, string) {
	g := 0
	switch {
	case grade == nil:
		p.Add("grade", "is required (0 for Kindergarten to 12): the grade the measure was taken in")
	case *grade < 0 || *grade > 12:
		p.Add("grade", "must be between 0 (Kindergarten) and 12, got %d", *grade)
	default:
		g = int(*grade)
	}
	if timeOfYear == nil {
		p.Add("timeOfYear", "is required (BOY, MOY or EOY): when in the year the measure was taken")
		return g, ""
	}
	toy, ok := measure.TimeOfYear(*timeOfYear)
	if !ok {
		p.Add("timeOfYear", "must be BOY, MOY or EOY, got %q", *timeOfYear)
	}
	return g, toy
}
