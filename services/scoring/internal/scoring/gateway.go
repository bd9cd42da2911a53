package scoring

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// gateway is the JSON front's door to the service (registered in-process): each method passes
// the call through serve.Invoke, so JSON callers meet the same interceptor as gRPC callers.
type gateway struct {
	scoringv1.UnimplementedScoringServiceServer
	s *Server
}

func (g gateway) ScoreItemResults(ctx context.Context, r *scoringv1.ScoreItemResultsRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemResults)
}

func (g gateway) ScoreItemIds(ctx context.Context, r *scoringv1.ScoreItemIdsRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemIds)
}

func (g gateway) ScoreScale(ctx context.Context, r *scoringv1.ScoreScaleRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreScale)
}

func (g gateway) ScoreItemResultsStrands(ctx context.Context, r *scoringv1.ScoreItemResultsStrandsRequest) (*scoringv1.StrandsMeasure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemResultsStrands)
}

func (g gateway) ScoreDifficultiesBayes(ctx context.Context, r *scoringv1.ScoreDifficultiesBayesRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreDifficultiesBayes)
}

func (g gateway) ScoreItemResultsBayes(ctx context.Context, r *scoringv1.ScoreItemResultsBayesRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemResultsBayes)
}

func (g gateway) ScoreItemIdsBayes(ctx context.Context, r *scoringv1.ScoreItemIdsBayesRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemIdsBayes)
}

func (g gateway) ScoreScaleBayes(ctx context.Context, r *scoringv1.ScoreScaleBayesRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreScaleBayes)
}

func (g gateway) ScoreItemResultsBayesStrands(ctx context.Context, r *scoringv1.ScoreItemResultsBayesStrandsRequest) (*scoringv1.BayesStrandsMeasure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreItemResultsBayesStrands)
}

func (g gateway) ScoreForm(ctx context.Context, r *scoringv1.ScoreFormRequest) (*scoringv1.Measure, error) {
	return serve.Invoke(ctx, r, g.s.ScoreForm)
}

func (g gateway) NextItem(ctx context.Context, r *scoringv1.NextItemRequest) (*scoringv1.NextItemResponse, error) {
	return serve.Invoke(ctx, r, g.s.NextItem)
}
