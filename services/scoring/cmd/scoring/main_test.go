package main

import (
	"io"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/scoring/internal/scoring"
)

// TestIdentity: the service's name, the default addresses and its own limits' defaults
// docs/operations.md documents, as the frame takes them from the service.
func TestIdentity(t *testing.T) {
	t.Parallel()
	cfg, err := serve.LoadConfig(identity, nil, []string{"YARDSTICK_DEV=true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Service != "scoring" || cfg.HTTPAddr != ":8080" || cfg.GRPCAddr != ":9090" {
		t.Errorf("got %q on %s and %s; want %q on :8080 and :9090", cfg.Service, cfg.HTTPAddr, cfg.GRPCAddr, "scoring")
	}
	if got, want := scoring.LimitsOf(cfg), (scoring.Limits{MaxItems: 5000}); got != want {
		t.Errorf("limits: got %+v; want %+v", got, want)
	}
}
