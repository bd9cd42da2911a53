package serve

import (
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestRouteTable: one entry per rpc served, found by path and by method alike, with its rule,
// group flag and both limits; the operational paths label metrics, anything else is "other".
func TestRouteTable(t *testing.T) {
	t.Parallel()
	h := startGuard(t) // the fake scoring and forecast services as the forecast service
	rt := h.srv.routes
	for _, tc := range []struct {
		path, method        string
		group, public       bool
		permission          string
		bodyLimit, msgLimit int64
	}{
		{"/api/forecast/reading/group", forecastv1.ForecastService_ForecastReadingGroup_FullMethodName, true, false, "forecast:group", 16 * mib, groupLimit},
		{"/api/forecast/reading", forecastv1.ForecastService_ForecastReading_FullMethodName, false, false, "forecast:reading", mib, mib},
		{"/api/score/items/idsWithResults/standard", scoringv1.ScoringService_ScoreItemResults_FullMethodName, false, false, "score:standard", mib, mib},
		{"/authToken", issueMethod, false, true, "", 64 << 10, 64 << 10},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			r := rt.ByPath[tc.path]
			if r == nil || rt.ByMethod[tc.method] != r {
				t.Fatalf("by path %v, by method %v; want the same entry", r, rt.ByMethod[tc.method])
			}
			if r.Method != tc.method || r.Group != tc.group || r.Rule.Public != tc.public || r.Rule.Permission != tc.permission ||
				r.BodyLimit != tc.bodyLimit || r.MessageLimit != tc.msgLimit {
				t.Errorf("got %+v; want method %s group %v public %v permission %q limits %d/%d", *r, tc.method, tc.group, tc.public, tc.permission, tc.bodyLimit, tc.msgLimit)
			}
			if rt.Label(tc.path) != tc.path {
				t.Errorf("label: got %q; want the path", rt.Label(tc.path))
			}
		})
	}
	health := rt.ByMethod[healthMethod]
	if health == nil || health.Path != "" || !health.Rule.Public || health.MessageLimit != mib {
		t.Errorf("health: got %+v; want public, no path, the body limit", health)
	}
	if rt.Label("/healthz") != "/healthz" || rt.Label("/wp-admin") != "other" {
		t.Errorf("labels: /healthz %q, /wp-admin %q; want /healthz and other", rt.Label("/healthz"), rt.Label("/wp-admin"))
	}
	if rt.Ceiling != groupLimit {
		t.Errorf("ceiling: got %d; want %d", rt.Ceiling, groupLimit)
	}
	groups := 0
	for path, r := range rt.ByPath {
		if r.Group != routes.IsGroup(path) {
			t.Errorf("%s: group %v; want %v", path, r.Group, routes.IsGroup(path))
		}
		if r.Group {
			groups++
		}
	}
	if groups != 2 {
		t.Errorf("group routes: got %d; want 2 (reading and math)", groups)
	}
}

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
