package prototest

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestAnswerAll: the service has every rpc of the contract's, each unary one answering its empty
// response through the interceptor given (or none), each stream a stub.
func TestAnswerAll(t *testing.T) {
	t.Parallel()
	desc := AnswerAll(t, scoringv1.ScoringService_ServiceDesc.ServiceName)
	want := scoringv1.ScoringService_ServiceDesc
	if desc.ServiceName != want.ServiceName || len(desc.Methods) != len(want.Methods) || len(desc.Streams) != len(want.Streams) {
		t.Fatalf("got %s with %d methods, %d streams; want %s's %d, %d", desc.ServiceName, len(desc.Methods), len(desc.Streams), want.ServiceName, len(want.Methods), len(want.Streams))
	}
	score := method(t, desc, "ScoreItemResults")
	dec := func(m any) error { proto.Merge(m.(proto.Message), Score(t, 100)); return nil }
	var seen *scoringv1.ScoreItemResultsRequest
	ic := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod != "/yardstick.scoring.v1.ScoringService/ScoreItemResults" {
			t.Errorf("interceptor: got method %s", info.FullMethod)
		}
		seen = req.(*scoringv1.ScoreItemResultsRequest)
		return h(ctx, req)
	}
	for name, ic := range map[string]grpc.UnaryServerInterceptor{"through an interceptor": ic, "without one": nil} {
		out, err := score(nil, context.Background(), dec, ic)
		if _, ok := out.(*scoringv1.Measure); !ok || err != nil || proto.Size(out.(proto.Message)) != 0 {
			t.Errorf("%s: got %T %v, %v; want an empty Measure", name, out, out, err)
		}
	}
	if proto.Size(seen) != 100 {
		t.Errorf("the interceptor saw %v; want the request decoded (100 bytes)", seen)
	}
	for _, s := range desc.Streams {
		if err := s.Handler(nil, nil); status.Code(err) != codes.Unimplemented {
			t.Errorf("stream %s: got %v; want Unimplemented", s.StreamName, err)
		}
	}
}

func method(t *testing.T, desc *grpc.ServiceDesc, name string) grpc.MethodHandler {
	t.Helper()
	for _, m := range desc.Methods {
		if m.MethodName == name {
			return m.Handler
		}
	}
	t.Fatalf("no method %s", name)
	return nil
}
