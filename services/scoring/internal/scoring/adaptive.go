package scoring

import (
	"context"
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// NextItem is the adaptive path (docs/api.md, POST /api/score/adaptive/next): the wire's request
// becomes pkg/measure's AdaptiveRequest, whose own checks name every problem under its wire path;
// the answer is the Bayes measure after the answers and the next item or the stop reason.
func (s *Server) NextItem(ctx context.Context, req *scoringv1.NextItemRequest) (*scoringv1.NextItemResponse, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	var bk *measure.Bank
	switch name := frameworkName(req.Framework); {
	case name == nil:
		p.Add("framework", "is required (%s)", b.FrameworkList())
	default:
		if _, known := b.Framework(*name); !known {
			p.Add("framework", "unknown framework %q (want %s)", req.GetFramework(), b.FrameworkList())
		} else if bk, known = b.Bank(*name); !known {
			p.Add("framework", "the content bundle has no %s items", *name)
		}
	}
	items := req.GetItems()
	if len(items) > s.limits.MaxItems {
		p.Add("items", "holds %d items; the limit is %d", len(items), s.limits.MaxItems)
	}
	lib := adaptiveRequest(&p, b, req)
	if bk != nil {
		bk.Check(&lib, p.Add)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	step, err := bk.Next(&lib)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "adaptive next item", err)
	}
	est := step.Estimate
	if !measure.Finite(est.Ability, est.Uncertainty) {
		return nil, rpcerr.Fault(ctx, s.log, "estimate is not finite", fmt.Errorf("%+v", est))
	}
	fw := bk.Framework()
	rep := measure.Reported(est)
	out := &scoringv1.NextItemResponse{
		StopReason:     step.StopReason,
		Ability:        wireAbility(rep),
		AbilityDisplay: fw.Display(rep.Ability),
		Uncertainty:    wireUncertainty(rep),
		ItemsAnswered:  int32(len(items)),
		Framework:      fw.Name,
		ApiVersion:     serve.Version,
	}
	if step.Next != nil {
		out.Next = &scoringv1.AdaptiveItem{Id: step.Next.ID, Strand: step.Next.Strand, MaxScore: int32(step.Next.MaxScore())}
	}
	return out, nil
}

// adaptiveRequest is the wire request in pkg/measure's terms; it checks what only the wire can
// get wrong (a missing result, or one outside its item's scores: checkResult, as on the other
// item-result paths, so pkg/measure meets only results it can take).
func adaptiveRequest(p *rpcerr.Problems, b *measure.Bundle, req *scoringv1.NextItemRequest) measure.AdaptiveRequest {
	lib := measure.AdaptiveRequest{
		PriorAbility:     req.PriorAbility,
		PriorUncertainty: req.PriorUncertainty,
		ElapsedDays:      req.ElapsedDays,
		TimeOfYear:       req.TimeOfYear,
		Pool:             req.GetPool(),
		Exclude:          req.GetExclude(),
		Strands:          req.GetStrands(),
		TargetSuccess:    req.TargetSuccess,
		Seed:             int64Of(req.Seed),
		Grade:            intOf(req.Grade),
		Randomesque:      intOf(req.Randomesque),
	}
	if st := req.GetStop(); st != nil {
		lib.Stop = measure.StopRules{
			MaxItems:          intOf(st.MaxItems),
			MinItems:          intOf(st.MinItems),
			TargetUncertainty: st.TargetUncertainty,
			Cut:               st.Cut,
			Confidence:        st.Confidence,
		}
	}
	lib.Items = make([]measure.Response, len(req.GetItems()))
	for i, it := range req.GetItems() {
		lib.Items[i] = measure.Response{ID: it.GetId()}
		if checkResult(p, b, i, it.Id, it.Result) {
			lib.Items[i].Correct, lib.Items[i].Score = *it.Result == 1, int(*it.Result)
		}
	}
	return lib
}

func int64Of(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

func intOf(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}
