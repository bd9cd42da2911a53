package serve

import (
	"context"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
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

// TestChainRefusesUnadmitted: a call the gate did not admit (no ticket, or a ticket for another
// method) is refused by the chain before its handler: never run unauthorized.
func TestChainRefusesUnadmitted(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	for _, tc := range []struct {
		name   string
		ticket *gate.Ticket
	}{{"no ticket", nil}, {"a ticket for another method", &gate.Ticket{Method: "/grpc.health.v1.Health/Check"}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ran := false
			handler := func(context.Context, any) (any, error) { ran = true; return "ran", nil }
			out, err := h.srv.unary(context.Background(), tc.ticket, &scoringv1.ScoreItemResultsRequest{}, &grpc.UnaryServerInfo{FullMethod: scoreMethod}, handler)
			if status.Code(err) != codes.Unauthenticated || out != nil || ran {
				t.Errorf("got %v, %v, handler run %v; want Unauthenticated and the handler not run", out, err, ran)
			}
		})
	}
	t.Run("a ticket for the method runs it", func(t *testing.T) {
		t.Parallel()
		out, err := h.srv.unary(context.Background(), &gate.Ticket{Method: scoreMethod}, &scoringv1.ScoreItemResultsRequest{}, &grpc.UnaryServerInfo{FullMethod: scoreMethod},
			func(context.Context, any) (any, error) { return "ran", nil })
		if err != nil || out != "ran" {
			t.Errorf("got %v, %v; want the handler's answer", out, err)
		}
	})
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
