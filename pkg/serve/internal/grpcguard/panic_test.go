package grpcguard

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestPanicInAStepRecovered: a panic in any step of a unary call on its goroutine (the read's
// admission, observe, message) is answered Internal with the documented problem and nothing of
// the panic, logged once with its stack, and the call logged and counted once, Internal; the
// server serves the next call.
func TestPanicInAStepRecovered(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"read", "observe", "message"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			var armed atomic.Bool
			armed.Store(true)
			h := startGuard(t, func(g *Guard) {
				SetStepHook(g, func(ctx context.Context, s string) {
					if s == step && callFrom(ctx).info.Route == scoreMethod && armed.CompareAndSwap(true, false) {
						panic("secret internal detail")
					}
				})
			})
			client := scoringv1.NewScoringServiceClient(h.conn)
			req := &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("a"), Result: ptr(int32(1))}}}
			_, err := client.ScoreItemResults(bearer("Bearer "+h.token), req)
			if got, want := status.Convert(err).Proto(), status.Convert(rpcerr.Internal()).Proto(); !cmp.Equal(got, want, protocmp.Transform()) {
				t.Fatalf("got %v; want %v", got, want)
			}
			if _, err := client.ScoreItemResults(bearer("Bearer "+h.token), req); err != nil {
				t.Fatalf("the next call: got %v; want OK", err)
			}
			waitFor(t, "both calls logged and counted", func() bool { return h.countAll(scoreMethod) == 2 })
			if got := h.count(scoreMethod, codes.Internal.String()); got != 1 {
				t.Errorf("calls counted Internal: got %v; want 1", got)
			}
			if !h.loggedAt(scoreMethod, codes.Internal.String(), "ERROR") {
				t.Errorf("no Internal line at ERROR for the call:\n%s", h.logs.String())
			}
			var panics []string
			for _, line := range strings.Split(h.logs.String(), "\n") {
				if strings.Contains(line, "secret internal detail") {
					panics = append(panics, line)
				}
			}
			if len(panics) != 1 {
				t.Fatalf("lines naming the panic: got %d; want 1:\n%s", len(panics), h.logs.String())
			}
			for _, want := range []string{`"msg":"panic in handler"`, `"route":"` + scoreMethod + `"`, `"stack":"goroutine `, "recoverCall"} {
				if !strings.Contains(panics[0], want) {
					t.Errorf("the panic's line has no %s:\n%s", want, panics[0])
				}
			}
			if left := h.openCalls(); left != 0 {
				t.Errorf("calls still listed as open: %d", left)
			}
		})
	}
}
