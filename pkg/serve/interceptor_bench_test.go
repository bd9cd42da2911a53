package serve

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// BenchmarkInterceptor is the frame's own cost per gRPC call (request id, auth from the verified
// cache, unknown-field check, log line, metrics) around a handler that does nothing.
func BenchmarkInterceptor(b *testing.B) {
	h := start(b, testConfig(b))
	s := h.srv
	s.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	tok := h.token("demo", "demo-secret")
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
	req := &scoringv1.ScoreItemResultsRequest{}
	for i := 0; i < 40; i++ {
		req.Items = append(req.Items, &scoringv1.ItemResult{Id: ptr("L000100"), Result: ptr(int32(1))})
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/yardstick.scoring.v1.ScoringService/ScoreItemResults"}
	handler := func(context.Context, any) (any, error) { return &scoringv1.Measure{}, nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.unary(ctx, req, info, handler); err != nil {
			b.Fatal(err)
		}
	}
}
