package main

import (
	"io"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/forecast/internal/forecast"
)

// TestIdentity: the service's name, the default addresses and its own limits' defaults
// docs/operations.md documents, as the frame takes them from the service.
func TestIdentity(t *testing.T) {
	t.Parallel()
	cfg, err := serve.LoadConfig(identity, nil, []string{"YARDSTICK_DEV=true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Service != "forecast" || cfg.HTTPAddr != ":8081" || cfg.GRPCAddr != ":9091" {
		t.Errorf("got %q on %s and %s; want %q on :8081 and :9091", cfg.Service, cfg.HTTPAddr, cfg.GRPCAddr, "forecast")
	}
	if got, want := forecast.LimitsOf(cfg), (forecast.Limits{MaxGroupBodyBytes: 16777216, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}); got != want {
		t.Errorf("limits: got %+v; want %+v", got, want)
	}
}
