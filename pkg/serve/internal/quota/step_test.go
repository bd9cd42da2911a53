package quota

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestStep: the chain's limit step counts a call of a client with a rate once, and lets pass
// without counting it a call the JSON front decided already (on its request's facts, or
// without them), a stream's record (its context carries the stream's pacer) and a call without
// a client; every call passes the step's next exactly once or is refused before it.
func TestStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ctx     func(t *testing.T, l *Limiter) context.Context
		counted bool // the call spends the client's rate (a burst of 1: the second is refused)
	}{
		{"a call of the client", func(t *testing.T, _ *Limiter) context.Context { return withClient(t, "acme") }, true},
		{"decided by the front, with its facts", func(t *testing.T, _ *Limiter) context.Context {
			return Decided(reqinfo.With(withClient(t, "acme"), &reqinfo.Info{}))
		}, false},
		{"decided by the front, without facts", func(t *testing.T, _ *Limiter) context.Context {
			return Decided(withClient(t, "acme"))
		}, false},
		{"another call's facts, not decided", func(t *testing.T, _ *Limiter) context.Context {
			return reqinfo.With(withClient(t, "acme"), &reqinfo.Info{})
		}, true},
		{"a stream's record", func(t *testing.T, l *Limiter) context.Context {
			ctx, out := l.OpenStream(withClient(t, "acme"))
			if out.Err != nil {
				t.Fatalf("open: %v", out.Err)
			}
			t.Cleanup(out.Done)
			return ctx
		}, false},
		{"no client", func(*testing.T, *Limiter) context.Context { return context.Background() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, _ := newLocalLimiter(t, Config{Rate: 1, Burst: 1}, map[string]token.Limits{"acme": {}})
			ctx := tc.ctx(t, l)
			info := &grpc.UnaryServerInfo{FullMethod: "/yardstick.scoring.v1.ScoringService/ScoreItemResults"}
			for i := range 2 {
				ran := 0
				_, err := l.Step(ctx, nil, info, func(context.Context, any) (any, error) { ran++; return nil, nil })
				refused := status.Code(err) == codes.ResourceExhausted
				if want := tc.counted && i == 1; refused != want || (ran == 1) == want {
					t.Errorf("call %d: got refused %v, handler run %d times; want refused %v", i+1, refused, ran, want)
				}
			}
			want := uint64(0)
			if tc.counted {
				want = 1
			}
			if got := l.Throttled("acme", ReasonRate); got != want {
				t.Errorf("throttled for the rate: got %d; want %d", got, want)
			}
		})
	}
}
