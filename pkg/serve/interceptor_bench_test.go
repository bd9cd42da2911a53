package serve

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// BenchmarkInterceptor is the frame's own cost per call (the gate: the token from the verified
// cache, the rule, the client's limits; then the chain) around a handler that does nothing.
func BenchmarkInterceptor(b *testing.B) {
	h := start(b, testConfig(b))
	s := h.srv
	s.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	tok := h.token("demo", "demo-secret")
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
	call := gate.Call{Route: s.routes.ByMethod["/yardstick.scoring.v1.ScoringService/ScoreItemResults"], Bearer: tok, Front: "grpc"}
	req := &scoringv1.ScoreItemResultsRequest{}
	for i := 0; i < 40; i++ {
		req.Items = append(req.Items, &scoringv1.ItemResult{Id: ptr("L000100"), Result: ptr(int32(1))})
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/yardstick.scoring.v1.ScoringService/ScoreItemResults"}
	handler := func(context.Context, any) (any, error) { return &scoringv1.Measure{}, nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		actx, t, err := s.gate.Admit(ctx, call, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.unary(actx, t, req, info, handler); err != nil {
			b.Fatal(err)
		}
		t.Release()
	}
}
