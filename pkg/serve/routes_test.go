package serve

import (
	"strings"
	"testing"
)

// TestEveryRouteDirect: the front finds each JSON route's handler by the rpc and path the
// generated gateway code names (httpfront.Mux.Register), for both contracts' services and one
// the frame has never seen, registered in whatever order: no handler is left to the mux.
func TestEveryRouteDirect(t *testing.T) {
	t.Parallel()
	registerThrowaway(t)
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *harness
	}{
		{"scoring", func(t *testing.T) *harness { return startService(t, testConfig(t), contractService(t, "scoring")) }},
		{"forecast", func(t *testing.T) *harness { return startService(t, forecastConfig(t), contractService(t, "forecast")) }},
		{"throwaway", func(t *testing.T) *harness { return startTest(t, testConfig(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.start(t)
			if logs := h.logs.String(); strings.Contains(logs, "serves no route") {
				t.Errorf("got a handler left to the mux; want every one direct: %s", logs)
			}
		})
	}
}
