package grpcguard

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestCallsGRPCEnds: calls that end before the unary interceptor (a message over the
// server-wide limit, which gRPC refuses itself) and streaming calls are logged and counted once.
// gRPC does not say how it answered the first kind: its line says Unknown (the caller got
// ResourceExhausted); a stream's line has the stream's own status.
func TestCallsGRPCEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		call   func(t *testing.T, h *harness) error
		code   codes.Code // what the caller gets
		logged codes.Code // what the log line and the metric say
		level  string     // the log line's
	}{
		{"over the server-wide limit", groupMethod, func(t *testing.T, h *harness) error {
			_, err := forecastv1.NewForecastServiceClient(h.conn).ForecastReadingGroup(bearer("Bearer "+h.token), groupOfSize(t, 16*mib+1))
			return err
		}, codes.ResourceExhausted, codes.Unknown, "WARN"},
		{"health watch the caller ends", watchMethod, func(t *testing.T, h *harness) error {
			ctx, cancel := context.WithCancel(context.Background())
			w, err := healthpb.NewHealthClient(h.conn).Watch(ctx, &healthpb.HealthCheckRequest{})
			if err == nil {
				_, err = w.Recv()
			}
			cancel()
			return err
		}, codes.Canceled, codes.Canceled, "INFO"},
		{"an ordinary call, for comparison", scoreMethod, func(t *testing.T, h *harness) error {
			_, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(bearer("Bearer "+h.token),
				&scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("ok"), Result: ptr(int32(1))}}})
			return err
		}, codes.OK, codes.OK, "INFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startGuard(t)
			if err := tc.call(t, h); tc.code != codes.Canceled && status.Code(err) != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			waitFor(t, "the call logged and counted", func() bool {
				return h.count(tc.method, tc.logged.String()) == 1 && h.logged(tc.method, tc.logged.String())
			})
			if !h.loggedAt(tc.method, tc.logged.String(), tc.level) {
				t.Errorf("the call's log line is not at level %s:\n%s", tc.level, h.logs.String())
			}
			time.Sleep(2 * EndedCallSweep) // a second line, were there one, would have come by now
			if got := h.countAll(tc.method); got != 1 {
				t.Errorf("calls counted: got %v; want 1 (logged once)", got)
			}
			if left := h.openCalls(); left != 0 {
				t.Errorf("calls still listed as open after they ended: %d", left)
			}
		})
	}
}

// openCalls is the number of calls the tap handle let in that no interceptor has taken yet.
func (h *harness) openCalls() int {
	h.g.openMu.Lock()
	defer h.g.openMu.Unlock()
	return len(h.g.open)
}
