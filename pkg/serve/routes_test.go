package serve

import (
	"strings"
	"testing"
)

// TestEveryRouteDirect: the front calls each JSON route's rpc, as the route table names it, on
// the in-process channel itself, for both contracts' services and one the frame has never seen:
// no route is left to the gateway's mux.
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
			if logs := h.logs.String(); strings.Contains(logs, "not on the in-process channel") {
				t.Errorf("got a route left to the mux; want every one direct: %s", logs)
			}
		})
	}
}
