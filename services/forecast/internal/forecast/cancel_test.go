package forecast

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// lookCounter is a context that counts how often the handler looks at it and is done from look
// after+1 on.
type lookCounter struct {
	context.Context
	after int64
	looks atomic.Int64
}

func (c *lookCounter) Err() error {
	if c.looks.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// TestGroupCancelled: a group forecast of 100,000 students whose caller goes away before the
// forecast or during it answers Canceled at the next stage instead of finishing the work (each
// stage is about 0.1 s at this size); one whose caller stays answers every student.
func TestGroupCancelled(t *testing.T) {
	t.Parallel()
	content, err := measure.OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	s := New(content, Limits{MaxGroupBodyBytes: 16 << 20, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(32.5), CutLevels: []float64{500, 650, 800}}
	for i := range 100000 {
		req.StudentData = append(req.StudentData, &forecastv1.StudentData{
			PriorAbility: proto.Float64(float64(200 + i%900)), PriorUncertainty: proto.Float64(70), ElapsedDays: proto.Float64(90),
		})
	}
	for _, after := range []int64{0, 1} {
		ctx := &lookCounter{Context: context.Background(), after: after}
		if _, err := s.ForecastReadingGroup(ctx, req); status.Code(err) != codes.Canceled {
			t.Errorf("cancelled after %d looks: %v; want code Canceled", after, err)
		}
		if got := ctx.looks.Load(); got != after+1 {
			t.Errorf("cancelled after %d looks: looked %d times; want %d (it stops at the first look that sees it)", after, got, after+1)
		}
	}
	got, err := s.ForecastReadingGroup(context.Background(), req)
	if err != nil || len(got.GetForecasts().GetStudents()) != 100000 {
		t.Fatalf("with its caller: %d students, %v; want 100000, nil", len(got.GetForecasts().GetStudents()), err)
	}
}
