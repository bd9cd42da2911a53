package main

import (
	"io"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// TestIdentity: the service's name and the default addresses docs/operations.md documents, as
// the frame takes them from the service.
func TestIdentity(t *testing.T) {
	t.Parallel()
	cfg, err := serve.LoadConfig(identity, nil, []string{"YARDSTICK_DEV=true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Service != "forecast" || cfg.HTTPAddr != ":8081" || cfg.GRPCAddr != ":9091" {
		t.Errorf("got %q on %s and %s; want %q on :8081 and :9091", cfg.Service, cfg.HTTPAddr, cfg.GRPCAddr, "forecast")
	}
}
