package serve

import (
	"net/http"
	"strings"
	"testing"
)

// TestNotFoundSuggestsAPath: a path one slip away from a documented one is answered 404 with
// that path; one far from all, without a guess; the other service's path, with its service; a
// batch record's path, as the unary front answers it.
func TestNotFoundSuggestsAPath(t *testing.T) {
	t.Parallel()
	h := startBatch(t, nil)
	token := "Bearer " + h.token("batcher", clientSecret)
	for _, tc := range []struct {
		name, method, path, info string
	}{
		{"a letter missing", http.MethodPost, "/api/throwaway/ech", "No endpoint has this path; did you mean /api/throwaway/echo? See /openapi.json."},
		{"the case wrong", http.MethodPost, "/api/Throwaway/Echo", "did you mean /api/throwaway/echo?"},
		{"the batch misspelt", http.MethodPost, "/api/throwaway/batches", "did you mean /api/throwaway/batch?"},
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
	t.Run("a batch record", func(t *testing.T) {
		t.Parallel()
		r := h.do(http.MethodPost, throwawayBatchPath, ndjson, `{"id":"a","path":"/api/throwaway/ech","body":{}}`+"\n", "Authorization", token)
		if want := `{"id":"a","status":404,"body":{"message":"Not found.","exceptionType":"NotFound","additionalInfo":"No endpoint has this path; did you mean /api/throwaway/echo? See /openapi.json."}}`; !strings.HasPrefix(string(r.body), want) {
			t.Errorf("got %s; want it to start %s", r.body, want)
		}
	})
}

// TestTooLargeNamesTheBatchPath: a unary call over the body limit is pointed to the batch path,
// which takes any number of such requests; at the limit it is read.
func TestTooLargeNamesTheBatchPath(t *testing.T) {
	t.Parallel()
	h := startBatch(t, func(c *Config) { c.Limits.MaxBodyBytes = 2048 })
	token := "Bearer " + h.token("batcher", clientSecret)
	body := func(n int) string { // a JSON object of exactly n bytes
		return `{"text":"` + strings.Repeat("x", n-len(`{"text":""}`)) + `"}`
	}
	if r := h.post(throwawayPath, body(2048), "Authorization", token); r.status == http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of the limit: got 413; want it read (%s)", r.body)
	}
	r := h.post(throwawayPath, body(2049), "Authorization", token)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status: got %d; want 413", r.status)
	}
	want := "The request body exceeds the size limit of 2048 bytes (2 KiB). Send many requests as records of POST " + throwawayBatchPath + " (NDJSON, one a line), which has no size limit."
	if info, _ := r.json(t)["additionalInfo"].(string); info != want {
		t.Errorf("additionalInfo: got %q; want %q", info, want)
	}
}
