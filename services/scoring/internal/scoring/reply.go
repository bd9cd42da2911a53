package scoring

import (
	"context"
	"fmt"
	"math"

	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// toInt32 is v rounded as the measures are shown (measure.Round), held to int32's range.
func toInt32(v float64) int32 {
	r := measure.Round(v)
	switch {
	case r > math.MaxInt32:
		return math.MaxInt32
	case r < math.MinInt32:
		return math.MinInt32
	}
	return int32(r)
}

// estimateFailed is the error of an estimate that did not finish: the caller's own (Canceled,
// DeadlineExceeded) when it has gone, so that nothing is logged as a fault; a fault otherwise.
func (s *Server) estimateFailed(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return status.FromContextError(ctxErr).Err()
	}
	return rpcerr.Fault(ctx, s.log, what, err)
}

// wireAbility and wireUncertainty are an estimate as the wire carries it, already Reported: a
// whole number, and an uncertainty of at least 1 (below 1 unit the SD is shown as 1, never as
// the 0 a request refuses as a prior).
func wireAbility(rep measure.Estimate) int32     { return toInt32(rep.Ability) }
func wireUncertainty(rep measure.Estimate) int32 { return max(1, toInt32(rep.Uncertainty)) }

// reply is the measure answer with what x asks for, or a fault when the estimate is not a
// finite number.
func (s *Server) reply(ctx context.Context, fw *measure.Framework, est measure.Estimate, x extras) (*scoringv1.Measure, error) {
	if !measure.Finite(est.Ability, est.Uncertainty) {
		return nil, rpcerr.Fault(ctx, s.log, "estimate is not finite", fmt.Errorf("%s: %+v", fw.Name, est))
	}
	rep := measure.Reported(est)
	m := measureReply(fw, rep)
	if err := s.apply(ctx, fw, rep, est.Ability, x, m); err != nil {
		return nil, err
	}
	return m, nil
}

// measureReply is the answer of a reported estimate.
func measureReply(fw *measure.Framework, rep measure.Estimate) *scoringv1.Measure {
	return &scoringv1.Measure{
		Ability:        wireAbility(rep),
		AbilityDisplay: fw.Display(rep.Ability),
		Uncertainty:    wireUncertainty(rep),
		Framework:      fw.Name,
		ApiVersion:     serve.Version,
	}
}
