package serve

import (
	"context"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestUnaryChain: the chain and the gRPC door's steps are the ones docs/architecture.md lists,
// in their order.
func TestUnaryChain(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	for _, tc := range []struct {
		prefix string
		steps  []namedInterceptor
	}{{"chain: ", s.unaryChain()}, {"gRPC door: ", s.grpcDoor()}} {
		var listed string
		for _, line := range strings.Split(string(doc), "\n") {
			if rest, ok := strings.CutPrefix(line, tc.prefix); ok {
				listed = rest
			}
		}
		var names []string
		for _, step := range tc.steps {
			names = append(names, step.name)
		}
		if got := strings.Join(names, " → "); got != listed {
			t.Errorf("%sgot %q; docs/architecture.md lists %q", tc.prefix, got, listed)
		}
	}
}

// TestInterceptorAuthorizesWithoutTap: a direct call the tap handle did not authorize (no
// verdict, or a verdict for another method) is authorized by the interceptor: never zero times.
func TestInterceptorAuthorizesWithoutTap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	handler := func(context.Context, any) (any, error) { return "ran", nil }
	// A verdict for another method is not taken either: grpcguard's TestTapAuthorized.
	for _, tc := range []struct{ name string }{{"no verdict"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			out, err := h.srv.unary(ctx, &scoringv1.ScoreItemResultsRequest{}, &grpc.UnaryServerInfo{FullMethod: scoreMethod}, handler)
			if status.Code(err) != codes.Unauthenticated || out != nil {
				t.Errorf("got %v, %v; want Unauthenticated and the handler not run", out, err)
			}
		})
	}
	t.Run("a tap-authorized call names its client in the log", func(t *testing.T) {
		t.Parallel()
		if _, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(bearer("Bearer "+h.token), scoreOfSize(t, 100)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.logs.String(), `"route":"`+scoreMethod+`","client_id":"demo","code":"OK"`) {
			t.Errorf("no log line with client_id demo:\n%s", h.logs)
		}
	})
}
