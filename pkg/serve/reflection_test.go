package serve

import (
	"context"
	"slices"
	"testing"

	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// TestReflection: grpcurl and other tools list the services without .proto files or a token.
func TestReflection(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	stream, err := reflectionpb.NewServerReflectionClient(h.grpc).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"yardstick.auth.v1.TokenService", "yardstick.scoring.v1.ScoringService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("services %v; want %s among them", names, want)
		}
	}
	_ = stream.CloseSend()
}
