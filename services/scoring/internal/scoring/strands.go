package scoring

import (
	"context"
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// ScoreItemResultsStrands is the standard estimate overall and per strand of the items' framework.
func (s *Server) ScoreItemResultsStrands(ctx context.Context, req *scoringv1.ScoreItemResultsStrandsRequest) (*scoringv1.StrandsMeasure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	grade, toy := gradeAndTime(&p, req.Grade, req.TimeOfYear)
	r := s.resolveItems(&p, b, itemResults(req.GetItems()), true, req.Framework, nil)
	bench := benchmark(&p, b, r.fw, grade, toy)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.Standard(measure.TestOf(r.answers))
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "standard estimate", err)
	}
	rep := measure.Reported(est)
	out := &scoringv1.StrandsMeasure{
		Ability:        wireAbility(rep),
		AbilityDisplay: r.fw.DisplayGrade(rep.Ability, grade),
		Uncertainty:    wireUncertainty(rep),
		Framework:      r.fw.Name,
		ApiVersion:     serve.Version,
	}
	if !measure.Finite(est.Ability, est.Uncertainty) {
		return nil, rpcerr.Fault(ctx, s.log, "estimate is not finite", fmt.Errorf("%+v", est))
	}
	strands, err := r.fw.StrandsContext(ctx, r.answers, est.Ability, bench)
	if err != nil {
		return nil, s.estimateFailed(ctx, "strand estimates", err)
	}
	for _, st := range strands {
		out.Strands = append(out.Strands, &scoringv1.Strand{Name: st.Name, Category: int32(st.Category)})
	}
	if req.GetFit() {
		if out.Fit, out.FitNote, err = s.personFit(ctx, r.fw, est.Ability, r.answers); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ScoreItemResultsBayesStrands is the Bayesian estimate overall and per strand.
func (s *Server) ScoreItemResultsBayesStrands(ctx context.Context, req *scoringv1.ScoreItemResultsBayesStrandsRequest) (*scoringv1.BayesStrandsMeasure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	grade, toy := gradeAndTime(&p, req.Grade, req.TimeOfYear)
	r := s.resolveItems(&p, b, itemResults(req.GetItems()), true, req.Framework, nil)
	pr, _ := prior(&p, r.fw, req.PriorAbility, req.PriorUncertainty, req.ElapsedDays)
	bench := benchmark(&p, b, r.fw, grade, toy)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.BayesContext(ctx, measure.TestOf(r.answers), pr)
	if err != nil {
		return nil, s.estimateFailed(ctx, "bayes estimate", err)
	}
	rep := measure.Reported(est)
	out := &scoringv1.BayesStrandsMeasure{
		Ability:        wireAbility(rep),
		AbilityDisplay: r.fw.DisplayGrade(rep.Ability, grade),
		Uncertainty:    wireUncertainty(rep),
		Framework:      r.fw.Name,
		ApiVersion:     serve.Version,
	}
	if !measure.Finite(est.Ability, est.Uncertainty) {
		return nil, rpcerr.Fault(ctx, s.log, "estimate is not finite", fmt.Errorf("%+v", est))
	}
	strands, err := r.fw.StrandsContext(ctx, r.answers, est.Ability, bench)
	if err != nil {
		return nil, s.estimateFailed(ctx, "strand estimates", err)
	}
	for _, st := range strands {
		if !measure.Finite(st.Ability, st.Uncertainty) {
			return nil, rpcerr.Fault(ctx, s.log, "strand estimate is not finite", fmt.Errorf("%+v", st))
		}
		srep := measure.Reported(measure.Estimate{Ability: st.Ability, Uncertainty: st.Uncertainty})
		out.Strands = append(out.Strands, &scoringv1.BayesStrand{
			Name:           st.Name,
			Ability:        wireAbility(srep),
			AbilityDisplay: r.fw.DisplayGrade(srep.Ability, grade),
			Uncertainty:    wireUncertainty(srep),
			Category:       int32(st.Category),
		})
	}
	if req.GetFit() {
		if out.Fit, out.FitNote, err = s.personFit(ctx, r.fw, est.Ability, r.answers); err != nil {
			return nil, err
		}
	}
	return out, nil
}
