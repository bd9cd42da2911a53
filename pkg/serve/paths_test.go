package serve

import (
	"net/http"
	"strings"
	"testing"
)

// TestNotFoundSuggestsAPath: the 404 of a path one slip away from a documented one names it, on
// the unary front and in a batch record's answer alike; the other service's path names its
// service. Which path is near enough is internal/httpfront's TestNearestPath; the 413 that names
// the batch path, TestRoutingAndTransportErrors and httpfront's TestTooLarge.
func TestNotFoundSuggestsAPath(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	token := "Bearer " + h.token("batcher", clientSecret)
	const suggested = `{"message":"Not found.","exceptionType":"NotFound","additionalInfo":"No endpoint has this path; did you mean /api/throwaway/echo? See /openapi.json."}`
	for _, tc := range []struct {
		name, method, path, info string
	}{
		{"a letter missing", http.MethodPost, "/api/throwaway/ech", "No endpoint has this path; did you mean /api/throwaway/echo? See /openapi.json."},
		{"an operational path", http.MethodGet, "/healtz", "did you mean /healthz?"},
		{"far from every path", http.MethodPost, "/completely/elsewhere/entirely", "No endpoint has this path; see /openapi.json."},
		{"the other service's", http.MethodPost, "/api/forecast/reading", "served by the forecast service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := h.do(tc.method, tc.path, "application/json", "{}", "Authorization", token)
			if r.status != http.StatusNotFound {
				t.Fatalf("status: got %d; want 404 (%s)", r.status, r.body)
			}
			if info, _ := r.json(t)["additionalInfo"].(string); !strings.Contains(info, tc.info) {
				t.Errorf("additionalInfo: got %q; want it to hold %q", info, tc.info)
			}
		})
	}
	t.Run("a documented path sent escaped", func(t *testing.T) {
		t.Parallel()
		// Matched as it reads unescaped, as grpc-gateway's mux (legacy unescaping) matched it.
		if r := h.do(http.MethodPost, "/api/throwaway/%65cho", "application/json", `{"text":"hi"}`, "Authorization", token); r.status != http.StatusOK {
			t.Errorf("status: got %d; want 200 (%s)", r.status, r.body)
		}
	})
	t.Run("a batch record", func(t *testing.T) {
		t.Parallel()
		r := h.do(http.MethodPost, throwawayBatchPath, ndjson, `{"id":"a","path":"/api/throwaway/ech","body":{}}`+"\n", "Authorization", token)
		if want := `{"id":"a","status":404,"body":` + suggested + `}`; !strings.HasPrefix(string(r.body), want) {
			t.Errorf("got %s; want it to start %s", r.body, want)
		}
	})
}
