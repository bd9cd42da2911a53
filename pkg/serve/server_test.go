package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestOperationalEndpoints: the paths httpRoutes serves beside the API, on a running server.
func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	h.post(throwawayPath, `{"text":"ok"}`, "Authorization", tok)

	for _, tc := range []struct{ path, want string }{
		{"/healthz", `"ok"`},
		{"/readyz", `"ready"`},
		{"/metrics", `yardstick_requests_total{code="200",front="http",route="` + throwawayPath + `",service="scoring"} 1`},
		{"/openapi.json", `"/api/score/items/idsWithResults/bayes/strands"`},
		{"/.well-known/jwks.json", `"EdDSA"`},
	} {
		r := h.do(http.MethodGet, tc.path, "", "")
		if r.status != 200 || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("GET %s: got %d, body without %s", tc.path, r.status, tc.want)
		}
	}
	r := h.do(http.MethodGet, "/openapi.json", "", "")
	if strings.Contains(string(r.body), "/api/forecast/") {
		t.Error("scoring's OpenAPI document lists forecast paths")
	}
}

// TestDocsRoute: /docs is Swagger UI on the HTTP front, GET and HEAD only; paths beside it are
// the API's 404.
func TestDocsRoute(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	cases := []struct {
		method, path string
		status       int
		contentType  string
		exception    string
	}{
		{http.MethodGet, "/docs", http.StatusOK, "text/html; charset=utf-8", ""},
		{http.MethodGet, "/docs/swagger-ui-bundle.js", http.StatusOK, "text/javascript; charset=utf-8", ""},
		{http.MethodHead, "/docs/", http.StatusOK, "text/html; charset=utf-8", ""},
		{http.MethodPost, "/docs", http.StatusMethodNotAllowed, "application/json", rpcerr.ExceptionMethodNotAllowed},
		{http.MethodGet, "/docs/nosuch.js", http.StatusNotFound, "application/json", rpcerr.ExceptionNotFound},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := h.do(c.method, c.path, "", "")
			if r.status != c.status {
				t.Fatalf("status: got %d; want %d", r.status, c.status)
			}
			if got := r.header.Get("Content-Type"); got != c.contentType {
				t.Errorf("Content-Type: got %q; want %q", got, c.contentType)
			}
			if c.exception == "" {
				return
			}
			var body rpcerr.ErrorBody
			if err := json.Unmarshal(r.body, &body); err != nil || body.ExceptionType != c.exception {
				t.Errorf("body: got %s; want exceptionType %s", r.body, c.exception)
			}
			if c.status == http.StatusMethodNotAllowed && !strings.Contains(r.header.Get("Allow"), http.MethodGet) {
				t.Errorf("Allow: got %q; want GET", r.header.Get("Allow"))
			}
		})
	}
}
