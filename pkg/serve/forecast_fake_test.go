package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// fakeForecast is a forecast service for the budget's tests. ForecastReadingGroup is the real
// service's group handler as it stands (services/forecast: validation, the group forecast of
// pkg/measure on the embedded bundle, one answer per student), so that its heap is the real one;
// ForecastMathGroup holds its answer until the test releases it, or fails as the test asks.
type fakeForecast struct {
	forecastv1.UnimplementedForecastServiceServer
	fw      *measure.Framework
	limits  *fakeLimits
	faulty  bool // ForecastMathGroup holds and fails on request
	started chan struct{}
	release chan struct{}
}

func newFakeForecast(t testing.TB, limits *fakeLimits) *fakeForecast {
	t.Helper()
	live, err := measure.OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	fw, ok := live.Bundle().Framework("lexile")
	if !ok {
		t.Fatal("the embedded bundle has no lexile framework")
	}
	return &fakeForecast{fw: fw, limits: limits, started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (f *fakeForecast) service() Service {
	return Service{
		Register: func(g grpc.ServiceRegistrar) { forecastv1.RegisterForecastServiceServer(g, f) },
		Gateway:  forecastGateway,
		Wire:     f.limits.wire(forecastWire),
		Methods:  f.limits.forecastMethods(),
	}
}

func (f *fakeForecast) ForecastReadingGroup(_ context.Context, req *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	var p rpcerr.Problems
	data := req.GetStudentData()
	switch {
	case len(data) == 0:
		p.Add("studentData", "must hold at least one student")
	case len(data) > f.limits.MaxStudents:
		p.Add("studentData", "holds %d students; the limit is %d", len(data), f.limits.MaxStudents)
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
	if v := req.TestUncertainty; v == nil || !measure.Finite(*v) || *v < 0 || *v > measure.MaxUncertainty {
		p.Add("testUncertainty", "is required, between 0 and %d", measure.MaxUncertainty)
	}
	cuts := req.GetCutLevels()
	if len(cuts) == 0 || len(cuts) > f.limits.MaxCutLevels {
		p.Add("cutLevels", "must hold 1 to %d cut levels", f.limits.MaxCutLevels)
	}
	for i, c := range cuts {
		if !measure.Finite(c) || math.Abs(c) > measure.MaxAbsMeasure || (i > 0 && c <= cuts[i-1]) {
			p.Add(fmt.Sprintf("cutLevels[%d]", i), "must be ascending numbers between %d and %d", -measure.MaxAbsMeasure, measure.MaxAbsMeasure)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	g := f.fw.Group(students, req.GetTestUncertainty(), req.GetCutLevels())
	if !measure.Finite(append(append([]float64{g.Ability, g.Uncertainty}, g.Proportions...), g.StdErrs...)...) {
		return nil, rpcerr.Internal()
	}
	out := &forecastv1.GroupForecastResponse{
		Forecasts: &forecastv1.GroupForecasts{
			Students: make([]*forecastv1.StudentForecast, len(g.Students)),
			Group: &forecastv1.GroupAggregate{
				GroupAbility: g.Ability, GroupUncertainty: g.Uncertainty,
				GroupProportionPerLevel: g.Proportions, GroupStderrPerLevel: g.StdErrs,
			},
		},
		ApiVersion: Version,
		Framework:  f.fw.Name,
	}
	backing := make([]forecastv1.StudentForecast, len(g.Students))
	for i, s := range g.Students {
		sf := &backing[i]
		sf.Ability, sf.AbilityDisplay, sf.Uncertainty, sf.Probabilities = s.Ability, f.fw.Display(s.Ability), s.Uncertainty, s.Probabilities
		out.Forecasts.Students[i] = sf
	}
	return out, nil
}

// ForecastMathGroup is ForecastReadingGroup, unless the test made the fake faulty: then it waits
// for release and answers by its testUncertainty: 1 a validation error, 2 a fault (500), 3 a
// panic, anything else an empty forecast.
func (f *fakeForecast) ForecastMathGroup(ctx context.Context, req *forecastv1.GroupForecastRequest) (*forecastv1.GroupForecastResponse, error) {
	if !f.faulty {
		return f.ForecastReadingGroup(ctx, req)
	}
	f.started <- struct{}{}
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch req.GetTestUncertainty() {
	case 1:
		return nil, rpcerr.Invalid("testUncertainty", "is wrong on purpose")
	case 2:
		return nil, errors.New("a fault on purpose")
	case 3:
		panic("a panic on purpose")
	}
	return &forecastv1.GroupForecastResponse{ApiVersion: Version}, nil
}

func (f *fakeForecast) ForecastReading(context.Context, *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return &forecastv1.Forecast{ApiVersion: Version}, nil
}

func (f *fakeForecast) ForecastMath(context.Context, *forecastv1.ForecastRequest) (*forecastv1.Forecast, error) {
	return &forecastv1.Forecast{ApiVersion: Version}, nil
}

func (f *fakeForecast) ForecastComprehension(context.Context, *forecastv1.ComprehensionRequest) (*forecastv1.ComprehensionResponse, error) {
	return &forecastv1.ComprehensionResponse{ApiVersion: Version}, nil
}

func (f *fakeForecast) Plan(context.Context, *forecastv1.PlanRequest) (*forecastv1.PlanResponse, error) {
	return &forecastv1.PlanResponse{ApiVersion: Version}, nil
}

func (f *fakeForecast) Growth(context.Context, *forecastv1.GrowthRequest) (*forecastv1.GrowthResponse, error) {
	return &forecastv1.GrowthResponse{ApiVersion: Version}, nil
}

// forecastGateway registers the forecast contract's JSON routes on a client of the in-process
// channel, as the forecast service does.
func forecastGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	return forecastv1.RegisterForecastServiceHandlerClient(ctx, mux, forecastv1.NewForecastServiceClient(conn))
}

// forecastConfig is the test configuration of a forecast server.
func forecastConfig(t testing.TB) Config {
	t.Helper()
	cfg, err := LoadConfig(forecastID, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReloadInterval = 0
	return cfg
}

// groupBody is a group forecast request of n students, in the JSON front's shape.
func groupBody(n int, student func(i int) string) []byte {
	b := []byte(`{"testUncertainty":30,"cutLevels":[400,600,800],"studentData":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, student(i)...)
	}
	return append(b, "]}"...)
}

// typicalStudent is a student as callers send them.
func typicalStudent(i int) string {
	return fmt.Sprintf(`{"priorAbility":%d,"priorUncertainty":%d,"elapsedDays":%d}`, 200+i%900, 40+i%50, i%365)
}
