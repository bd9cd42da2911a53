package forecast

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// refusedAsPrior is what CheckPrior finds wrong with an answer sent back as a prior ("" when
// nothing).
func refusedAsPrior(ability, uncertainty float64) string {
	days, problems := 0.0, ""
	measure.CheckPrior(func(field, format string, args ...any) {
		problems += field + " " + fmt.Sprintf(format, args...) + "; "
	}, "", &ability, &uncertainty, &days)
	return problems
}

// TestForecastsAreSendableAsPriors: from priors at the edges of what a request accepts (10,000 ±
// 10,000 ten years ago: the grown uncertainty passed 10,000), the single and group forecasts
// answer abilities and uncertainties a request takes back as a prior.
func TestForecastsAreSendableAsPriors(t *testing.T) {
	t.Parallel()
	content, err := measure.OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	s := New(content, Limits{MaxGroupBodyBytes: 16 << 20, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	priors := [][3]float64{{10000, 10000, 3653}, {-10000, 10000, 3653}, {-10000, 1e-300, 0}, {10000, 5e-324, 0}, {0, 9999.9, 3653}}
	group := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(0), CutLevels: []float64{500}}
	for _, p := range priors {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			got, err := s.ForecastReading(context.Background(), &forecastv1.ForecastRequest{
				PriorAbility: proto.Float64(p[0]), PriorUncertainty: proto.Float64(p[1]), ElapsedDays: proto.Float64(p[2]),
				TestUncertainty: proto.Float64(10000), CutLevels: []float64{500},
			})
			if err != nil {
				t.Fatal(err)
			}
			if why := refusedAsPrior(got.GetAbility(), got.GetUncertainty()); why != "" {
				t.Errorf("forecast %v ± %v is refused as a prior: %s", got.GetAbility(), got.GetUncertainty(), why)
			}
		})
		group.StudentData = append(group.StudentData, &forecastv1.StudentData{PriorAbility: proto.Float64(p[0]), PriorUncertainty: proto.Float64(p[1]), ElapsedDays: proto.Float64(p[2])})
	}
	got, err := s.ForecastReadingGroup(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range got.GetForecasts().GetStudents() {
		if why := refusedAsPrior(f.GetAbility(), f.GetUncertainty()); why != "" {
			t.Errorf("student %d: forecast %v ± %v is refused as a prior: %s", i, f.GetAbility(), f.GetUncertainty(), why)
		}
	}
	g := got.GetForecasts().GetGroup()
	if why := refusedAsPrior(g.GetGroupAbility(), g.GetGroupUncertainty()); why != "" {
		t.Errorf("group %v ± %v is refused as a prior: %s", g.GetGroupAbility(), g.GetGroupUncertainty(), why)
	}
}
