package serve

import (
	"context"
	"io"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// TestReflection: on in dev mode (grpcurl lists the services without .proto files or a token),
// off otherwise, and YARDSTICK_REFLECTION overrides either way.
func TestReflection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		dev        bool
		reflection string
		want       bool
	}{
		{"dev mode, auto: on", true, "auto", true},
		{"production, auto: off", false, "auto", false},
		{"dev mode, forced off", true, "false", false},
		{"production, forced on", false, "true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Reflection = tc.reflection
			if !tc.dev {
				cfg.Dev, cfg.ClientsFile, cfg.KeysDir = false, writeTestClients(t), writeKey(t).dir
			}
			h := startTest(t, cfg)
			names, err := listServices(h)
			if !tc.want {
				if status.Code(err) != codes.Unimplemented {
					t.Errorf("got %v, %v; want Unimplemented (reflection off)", names, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("reflection: %v", err)
			}
			for _, want := range []string{"yardstick.auth.v1.TokenService", throwawayService, "grpc.health.v1.Health"} {
				if !slices.Contains(names, want) {
					t.Errorf("services %v; want %s among them", names, want)
				}
			}
		})
	}
}

func listServices(h *harness) ([]string, error) {
	stream, err := reflectionpb.NewServerReflectionClient(h.grpc).ServerReflectionInfo(context.Background())
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil && err != io.EOF { // io.EOF: the server ended the stream; Recv says why
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	return names, nil
}

// TestHealthPerService: grpc.health.v1 answers for the server as a whole and for each service.
func TestHealthPerService(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	hc := healthpb.NewHealthClient(h.grpc)
	for _, name := range []string{"", throwawayService, "yardstick.auth.v1.TokenService"} {
		got, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: name})
		if err != nil || got.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q): got %v, %v; want SERVING", name, got, err)
		}
	}
	if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "no.such.Service"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(unknown service): got %v; want NotFound", err)
	}
}
