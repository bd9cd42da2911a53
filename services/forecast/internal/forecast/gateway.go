package forecast

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// gateway is the JSON front's door to the service (registered in-process): each method passes
// the call through serve.Invoke, so JSON callers meet the same interceptor as gRPC callers.
type gateway struct {
	forecastv1.UnimplementedForecastServiceServer
	s *Server
}

func (g gateway) ForecastReading(ctx context.Context, r *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return serve.Invoke(ctx, r, g.s.ForecastReading)
}

func (g gateway) ForecastMath(ctx context.Context, r *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return serve.Invoke(ctx, r, g.s.ForecastMath)
}

func (g gateway) ForecastReadingGroup(ctx context.Context, r *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	return serve.Invoke(ctx, r, g.s.ForecastReadingGroup)
}

func (g gateway) ForecastMathGroup(ctx context.Context, r *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	return serve.Invoke(ctx, r, g.s.ForecastMathGroup)
}

func (g gateway) ForecastComprehension(ctx context.Context, r *forecastv1.ComprehensionRequest) (*forecastv1.ComprehensionResponse, error) {
	return serve.Invoke(ctx, r, g.s.ForecastComprehension)
}

func (g gateway) Plan(ctx context.Context, r *forecastv1.PlanRequest) (*forecastv1.PlanResponse, error) {
	return serve.Invoke(ctx, r, g.s.Plan)
}
