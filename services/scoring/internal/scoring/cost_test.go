package scoring

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// direct is the scoring server without the frame, for calls with a context the test controls.
func direct(t *testing.T) *Server {
	t.Helper()
	content, err := measure.OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	return New(content, Limits{MaxItems: 5000}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// manyStepsRequest is the request that cost 10 s of CPU: one item of 5,000 steps, the first at
// −10,000 and the rest at 10,000, one point scored, prior 0 ± 10,000.
func manyStepsRequest(framework string) *scoringv1.ScoreDifficultiesBayesRequest {
	steps := make([]float64, 5000)
	steps[0] = -10000
	for i := 1; i < len(steps); i++ {
		steps[i] = 10000
	}
	return &scoringv1.ScoreDifficultiesBayesRequest{
		Items:            []*scoringv1.ItemDifficulty{{Steps: steps}},
		NumberCorrect:    proto.Int32(1),
		Framework:        proto.String(framework),
		PriorAbility:     proto.Float64(0),
		PriorUncertainty: proto.Float64(10000),
		ElapsedDays:      proto.Float64(0),
	}
}

// lookCounter is a context that counts how often the estimate looks at it and is done from look
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

// TestManyStepsRequest: the 5,000-step request answers (it is not refused), and when its caller
// goes away mid-estimate the handler stops within four looks (64 evaluations of the posterior,
// about 5 ms of CPU) and answers Canceled, not a fault.
func TestManyStepsRequest(t *testing.T) {
	t.Parallel()
	s := direct(t)
	for fw, want := range map[string][2]int32{"lexile": {-205, 5356}, "quantile": {-64, 5357}} {
		t.Run(fw, func(t *testing.T) {
			t.Parallel()
			got, err := s.ScoreDifficultiesBayes(context.Background(), manyStepsRequest(fw))
			if err != nil {
				t.Fatalf("ScoreDifficultiesBayes: %v", err)
			}
			// pkg/measure's TestBayesManySteps holds these posteriors to a slow exact
			// integration (lexile −205.2 ± 5356.2).
			if got.GetAbility() != want[0] || got.GetUncertainty() != want[1] {
				t.Errorf("got %d ± %d; want %d ± %d", got.GetAbility(), got.GetUncertainty(), want[0], want[1])
			}
			for _, after := range []int64{0, 5} {
				ctx := &lookCounter{Context: context.Background(), after: after}
				_, err := s.ScoreDifficultiesBayes(ctx, manyStepsRequest(fw))
				if code := status.Code(err); code != codes.Canceled {
					t.Errorf("cancelled after %d looks: %v; want code Canceled", after, err)
				}
				if extra := ctx.looks.Load() - (after + 1); extra > 4 {
					t.Errorf("cancelled after %d looks: %d more looks; want at most 4", after, extra)
				}
			}
		})
	}
}

// TestManyStepsOverTheWire: the 5,000-step request (35 KB of JSON) is answered 200 over HTTP and
// OK over gRPC, through the whole frame, with the estimate the direct call gives.
func TestManyStepsOverTheWire(t *testing.T) {
	t.Parallel()
	s := start(t)
	req := manyStepsRequest("lexile")
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Post("/api/score/items/difficulties/bayes", string(body))
	var got struct{ Ability, Uncertainty int32 }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || got.Ability != -205 || got.Uncertainty != 5356 {
		t.Errorf("HTTP (%d bytes): %d %s; want 200 with -205 ± 5356", len(body), r.Status, r.Body)
	}
	m, err := scoringv1.NewScoringServiceClient(s.Conn).ScoreDifficultiesBayes(s.Authed(context.Background()), req)
	if err != nil || m.GetAbility() != -205 || m.GetUncertainty() != 5356 {
		t.Errorf("gRPC: %v, %v; want -205 ± 5356", m, err)
	}
}
