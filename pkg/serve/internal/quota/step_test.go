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

// TestStep: the limit step counts a call of a client with a rate once (the same step met again,
// as the chain's after the gRPC door's, passes it), and lets pass without counting it a call
// a door decided already (marked on its request's facts), a stream's record (its context
// carries the stream's pacer) and a call without a client; every call passes the step's next
// exactly once or is refused before it. Every call carries its request's facts, as every call
// a door lets in does.
func TestStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ctx     func(t *testing.T, l *Limiter) context.Context
		counted bool // the call spends the client's rate (a burst of 1: the second is refused)
		cfg     *Config
	}{
		{"a call of the client", func(t *testing.T, _ *Limiter) context.Context { return withFacts(t, "acme") }, true, nil},
		{"decided by the front", func(t *testing.T, _ *Limiter) context.Context { return Decided(withFacts(t, "acme")) }, false, nil},
		{"a stream's record", func(t *testing.T, l *Limiter) context.Context {
			ctx, out := l.OpenStream(withFacts(t, "acme"))
			if out.Err != nil {
				t.Fatalf("open: %v", out.Err)
			}
			t.Cleanup(out.Done)
			return ctx
		}, false, nil},
		{"no client", func(*testing.T, *Limiter) context.Context { return reqinfo.With(context.Background(), &reqinfo.Info{}) }, false, nil},
		// A slot of a concurrency of 1 is taken once: a second step that took one too would be
		// refused.
		{"a client with a concurrency only", func(t *testing.T, _ *Limiter) context.Context { return withFacts(t, "acme") }, false,
			&Config{Concurrency: 1}},
		{"a client without limits", func(t *testing.T, _ *Limiter) context.Context { return withFacts(t, "acme") }, false, &Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Rate: 1, Burst: 1}
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			l, _ := newLocalLimiter(t, cfg, map[string]token.Limits{"acme": {}})
			info := &grpc.UnaryServerInfo{FullMethod: "/yardstick.scoring.v1.ScoringService/ScoreItemResults"}
			for i := range 2 {
				ran, again := 0, 0
				_, err := l.Step(tc.ctx(t, l), nil, info, func(ctx context.Context, req any) (any, error) {
					ran++
					// The call goes on marked counted: the chain's step, met again, passes it.
					_, err := l.Step(ctx, req, info, func(context.Context, any) (any, error) { again++; return nil, nil })
					return nil, err
				})
				refused := status.Code(err) == codes.ResourceExhausted
				if want := tc.counted && i == 1; refused != want || (ran == 1) == want || again != ran {
					t.Errorf("call %d: got refused %v, handler run %d times (%d through a second step); want refused %v", i+1, refused, ran, again, want)
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

// withFacts is a call of client id with its request's facts (reqinfo), as each door gives it.
func withFacts(t *testing.T, id string) context.Context {
	return reqinfo.With(withClient(t, id), &reqinfo.Info{})
}
