package forecast

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// Server implements ForecastService on the current content bundle's framework parameters.
type Server struct {
	forecastv1.UnimplementedForecastServiceServer
	content *measure.Live
	limits  Limits
	log     *slog.Logger
	wire    serve.Wire // the JSON front's codec, for the group streams' lines (groupstream.go)
}

// New returns the forecast service on content.
func New(content *measure.Live, limits Limits, log *slog.Logger) *Server {
	return &Server{content: content, limits: limits, log: log, wire: serve.NewWire(WireRules(limits))}
}

// Service is the server as the serving frame takes it.
func (s *Server) Service() serve.Service {
	return serve.Service{
		Register: func(g grpc.ServiceRegistrar) { forecastv1.RegisterForecastServiceServer(g, s) },
		// The JSON routes: the gateway's on a client of the frame's in-process channel.
		Gateway: func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
			return forecastv1.RegisterForecastServiceHandlerClient(ctx, mux, forecastv1.NewForecastServiceClient(conn))
		},
		Reload:  s.content.Reload,
		Version: s.content.Version,
		Wire:    WireRules(s.limits),
		Methods: s.limits.methods(),
		// The NDJSON batch (docs/api.md): each record runs as a unary call of its path.
		BatchPath: "/api/forecast/batch",
		// Its gRPC form, served by the frame the same way: each record a unary call of its rpc.
		BatchRPC: forecastv1.ForecastService_ForecastBatch_FullMethodName,
		// The group streams (their permissions are the gRPC group stream's).
		GroupStreams: s.groupStreams(),
	}
}

func (s *Server) ForecastReading(ctx context.Context, req *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return s.single(ctx, measure.SubjectReading, req)
}

func (s *Server) ForecastMath(ctx context.Context, req *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return s.single(ctx, measure.SubjectMath, req)
}

func (s *Server) ForecastReadingGroup(ctx context.Context, req *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	return s.group(ctx, measure.SubjectReading, req)
}

func (s *Server) ForecastMathGroup(ctx context.Context, req *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	return s.group(ctx, measure.SubjectMath, req)
}

// subjectFramework is the bundle's framework of a forecast subject, with the norm curve every
// forecast follows; it says in p what the bundle lacks (nil then).
func subjectFramework(p *rpcerr.Problems, b *measure.Bundle, subject string) *measure.Framework {
	fw, ok := b.Subject(subject)
	switch {
	case !ok:
		p.Add("subject", "the bundle has no framework for subject %q, so %s forecasts are not available", subject, subject)
		return nil
	case !fw.HasNormCurve():
		p.Add("grade", "the bundle has no norm curve for framework %q, so forecasts are not available", fw.Name)
		return nil
	}
	return fw
}

// name is a framework's name, "" for none.
func name(fw *measure.Framework) string {
	if fw == nil {
		return ""
	}
	return fw.Name
}

func (s *Server) single(ctx context.Context, subject string, req *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	var p rpcerr.Problems
	b := s.content.Bundle()
	ability, uncertainty, days := req.PriorAbility, req.PriorUncertainty, req.ElapsedDays
	measure.CheckPrior(p.Add, "", ability, uncertainty, days)
	testSD := s.testUncertainty(&p, req.TestUncertainty)
	cuts := s.cutLevels(&p, req.GetCutLevels())
	fw := subjectFramework(&p, b, subject)
	g := percentileAsked(&p, b, name(fw), req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	f := fw.Forecast(measure.Normal{Mean: *ability, SD: *uncertainty}, *days, testSD, cuts)
	if !measure.Finite(append([]float64{f.Ability, f.Uncertainty}, f.Probabilities...)...) {
		return nil, rpcerr.Fault(ctx, s.log, "forecast is not finite", fmt.Errorf("%+v", f))
	}
	rep := measure.Reported(measure.Estimate{Ability: f.Ability, Uncertainty: f.Uncertainty})
	return &forecastv1.Forecast{
		Ability:        rep.Ability,
		AbilityDisplay: g.display(fw, rep.Ability),
		Uncertainty:    rep.Uncertainty,
		Probabilities:  f.Probabilities,
		ApiVersion:     serve.Version,
		Framework:      fw.Name,
		Percentile:     g.percentile(rep.Ability),
	}, nil
}

func (s *Server) group(ctx context.Context, subject string, req *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	var p rpcerr.Problems
	b := s.content.Bundle()
	data := req.GetStudentData()
	switch {
	case len(data) == 0:
		p.Add("studentData", "must hold at least one student")
	case len(data) > s.limits.MaxStudents:
		p.Add("studentData", "holds %d students; the limit is %d", len(data), s.limits.MaxStudents)
		data = nil
	}
	students := make([]measure.Student, len(data))
	for i, d := range data {
		measure.CheckPrior(p.Add, fmt.Sprintf("studentData[%d].", i), d.PriorAbility, d.PriorUncertainty, d.ElapsedDays)
		students[i] = measure.Student{
			Prior:       measure.Normal{Mean: d.GetPriorAbility(), SD: d.GetPriorUncertainty()},
			ElapsedDays: d.GetElapsedDays(),
		}
	}
	testSD := s.testUncertainty(&p, req.TestUncertainty)
	cuts := s.cutLevels(&p, req.GetCutLevels())
	fw := subjectFramework(&p, b, subject)
	gr := percentileAsked(&p, b, name(fw), req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	// A group of 100,000 takes about 0.1 s to forecast and as long again to answer: the work
	// stops at each stage once the caller has gone.
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	g := fw.Group(students, testSD, cuts)
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	if !measure.Finite(append(append([]float64{g.Ability, g.Uncertainty}, g.Proportions...), g.StdErrs...)...) {
		return nil, rpcerr.Fault(ctx, s.log, "group forecast is not finite", fmt.Errorf("ability %v uncertainty %v", g.Ability, g.Uncertainty))
	}
	grep := measure.Reported(measure.Estimate{Ability: g.Ability, Uncertainty: g.Uncertainty})
	out := &forecastv1.GroupForecastResponse{
		Forecasts: &forecastv1.GroupForecasts{
			Students: make([]*forecastv1.StudentForecast, len(g.Students)),
			Group: &forecastv1.GroupAggregate{
				GroupAbility:            grep.Ability,
				GroupUncertainty:        grep.Uncertainty,
				GroupProportionPerLevel: g.Proportions,
				GroupStderrPerLevel:     g.StdErrs,
			},
		},
		ApiVersion: serve.Version,
		Framework:  fw.Name,
	}
	// One backing array for all students: 100,000 small allocations cost more than the math.
	backing := make([]forecastv1.StudentForecast, len(g.Students))
	for i, f := range g.Students {
		sf := &backing[i]
		rep := measure.Reported(measure.Estimate{Ability: f.Ability, Uncertainty: f.Uncertainty})
		sf.Ability, sf.AbilityDisplay, sf.Uncertainty, sf.Probabilities = rep.Ability, fw.Display(rep.Ability), rep.Uncertainty, f.Probabilities
		if gr.asked {
			sf.AbilityDisplay, sf.Percentile = gr.display(fw, rep.Ability), gr.percentile(rep.Ability)
		}
		out.Forecasts.Students[i] = sf
	}
	return out, nil
}

func (s *Server) testUncertainty(p *rpcerr.Problems, v *float64) float64 {
	switch {
	case v == nil:
		p.Add("testUncertainty", "is required")
	case !measure.Finite(*v) || *v < 0 || *v > measure.MaxUncertainty:
		p.Add("testUncertainty", "must be between 0 and %d, got %v", measure.MaxUncertainty, *v)
	default:
		return *v
	}
	return 0
}

func (s *Server) cutLevels(p *rpcerr.Problems, cuts []float64) []float64 {
	switch {
	case len(cuts) == 0:
		p.Add("cutLevels", "must hold at least one cut level")
		return nil
	case len(cuts) > s.limits.MaxCutLevels:
		p.Add("cutLevels", "holds %d cut levels; the limit is %d", len(cuts), s.limits.MaxCutLevels)
		return nil
	}
	for i, c := range cuts {
		switch {
		case !measure.Finite(c) || math.Abs(c) > measure.MaxAbsMeasure:
			p.Add(fmt.Sprintf("cutLevels[%d]", i), "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, c)
		case i > 0 && c <= cuts[i-1]:
			p.Add(fmt.Sprintf("cutLevels[%d]", i), "must be greater than cutLevels[%d] (%v); cut levels are strictly ascending", i-1, cuts[i-1])
		}
	}
	return cuts
}
