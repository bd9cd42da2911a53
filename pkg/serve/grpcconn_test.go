package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestGRPCAbusiveConnectionClosed: a connection that has more than 200 calls refused on their
// headers in a second is closed (counted, logged); at 200 it is not. Another connection is
// untouched.
func TestGRPCAbusiveConnectionClosed(t *testing.T) {
	t.Parallel()
	// 200 a second: grpcguard's TestTransportLimits.
	// The clock stands still: every refusal falls in the same second, however slow the machine.
	t0 := time.Unix(1000, 0)
	h := startGuard(t, func(s *Server) { s.guard.SetClock(func() time.Time { return t0 }) })
	closed := func() float64 { return h.metric("yardstick_grpc_connections_closed_total") }
	refuse := func(score scoringv1.ScoringServiceClient, n int) (refused int, other error) {
		for range n {
			_, err := score.ScoreItemResults(context.Background(), scoreOfSize(t, 100))
			if status.Code(err) != codes.Unauthenticated {
				return refused, err
			}
			refused++
		}
		return refused, nil
	}
	// 200 refusals: the connection stays (the last one is still answered by the server).
	polite := scoringv1.NewScoringServiceClient(h.dial(t))
	if n, err := refuse(polite, 200); n != 200 || closed() != 0 {
		t.Fatalf("200 refusals: got %d refused (then %v), %v connections closed; want 200, none closed", n, err, closed())
	}
	// One more within the second closes it: that call, or the next, finds the connection gone.
	abusive := scoringv1.NewScoringServiceClient(h.dial(t))
	_, _ = refuse(abusive, 201)
	waitFor(t, "the abusive connection closed", func() bool { return closed() == 1 })
	if !h.loggedMsg("grpc connection closed") {
		t.Errorf("no log line for the closed connection:\n%s", h.logs)
	}
	authed := bearer("Bearer " + h.token)
	if _, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) == codes.Unavailable || status.Code(err) == codes.Unauthenticated {
		t.Errorf("a call on a connection opened before: %v", err)
	}
	// For a second the address's new connections are closed as they are accepted (the clock stands
	// still here, so the second never ends).
	if _, err := scoringv1.NewScoringServiceClient(h.dial(t)).ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) != codes.Unavailable {
		t.Errorf("a new connection from the address during the cooldown: got %v; want Unavailable", err)
	}
	if got := h.metric("yardstick_grpc_connections_refused_total"); got < 1 {
		t.Errorf("yardstick_grpc_connections_refused_total: got %v; want at least 1", got)
	}
}

// loggedMsg reports whether a log line has msg.
func (h *guardHarness) loggedMsg(msg string) bool {
	return strings.Contains(h.logs.String(), `"msg":"`+msg)
}

// metric is the value of a counter of the server's registry without labels of its own.
func (h *guardHarness) metric(name string) float64 {
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// loginSlots and infraSlots are the read slots held by calls without a token.
func (h *guardHarness) loginSlots() int { n, _ := h.srv.guard.SlotsHeld(); return n }
func (h *guardHarness) infraSlots() int { _, n := h.srv.guard.SlotsHeld(); return n }
