package serve

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
)

// BenchmarkInterceptor is the frame's own cost per call (the gate: the token from the verified
// cache, the rule, the client's limits; then the chain) around a handler that does nothing.
func BenchmarkInterceptor(b *testing.B) {
	h := startTest(b, testConfig(b))
	s := h.srv
	s.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	tok := h.token("demo", "demo-secret")
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
	call := gate.Call{Route: s.routes.ByMethod[throwawayMethod], Bearer: tok, Front: "grpc"}
	var items []any
	for range 40 {
		items = append(items, "L000100", 1)
	}
	req := echoRequest("x", items...)
	info := &grpc.UnaryServerInfo{FullMethod: throwawayMethod}
	answer := dynamicpb.NewMessage(echoOut)
	handler := func(context.Context, any) (any, error) { return answer, nil }
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
