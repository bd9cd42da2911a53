package serve

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCORSConfig: off by default; origins as browsers send them; * alone and never with
// credentials; the max age in whole seconds up to a day, both sides of each bound.
func TestCORSConfig(t *testing.T) {
	t.Parallel()
	dev := func(kv ...string) []string { return append([]string{"YARDSTICK_DEV=true"}, kv...) }
	runLoadCases(t, []loadCase{
		{name: "off by default", service: "scoring", env: dev(), check: func(t *testing.T, c Config) {
			if c.CORSOrigins != nil || c.CORSCredentials || c.CORSMaxAge != 10*time.Minute {
				t.Errorf("got origins %q credentials %v max age %s; want none, false, 10m", c.CORSOrigins, c.CORSCredentials, c.CORSMaxAge)
			}
		}},
		{name: "list with spaces and ports", service: "forecast",
			env: dev("YARDSTICK_CORS_ORIGINS= https://app.example.com , http://localhost:5173,"), check: func(t *testing.T, c Config) {
				if want := []string{"https://app.example.com", "http://localhost:5173"}; !slices.Equal(c.CORSOrigins, want) {
					t.Errorf("got %q; want %q", c.CORSOrigins, want)
				}
			}},
		{name: "flag wins", service: "scoring", env: dev("YARDSTICK_CORS_ORIGINS=https://a.example"),
			args: []string{"-cors-origins", "https://b.example", "-cors-credentials", "-cors-max-age", "24h"}, check: func(t *testing.T, c Config) {
				if !slices.Equal(c.CORSOrigins, []string{"https://b.example"}) || !c.CORSCredentials || c.CORSMaxAge != 24*time.Hour {
					t.Errorf("got %q %v %s; want [https://b.example] true 24h", c.CORSOrigins, c.CORSCredentials, c.CORSMaxAge)
				}
			}},
		{name: "star alone", service: "scoring", env: dev("YARDSTICK_CORS_ORIGINS=*", "YARDSTICK_CORS_MAX_AGE=0s"), check: func(t *testing.T, c Config) {
			if !slices.Equal(c.CORSOrigins, []string{"*"}) || c.CORSMaxAge != 0 {
				t.Errorf("got %q %s; want [*] 0s", c.CORSOrigins, c.CORSMaxAge)
			}
		}},
		{name: "star with credentials", service: "scoring", env: dev("YARDSTICK_CORS_ORIGINS=*", "YARDSTICK_CORS_CREDENTIALS=true"),
			wantErr: []string{"YARDSTICK_CORS_ORIGINS * with YARDSTICK_CORS_CREDENTIALS=true"}},
		{name: "star among origins", service: "scoring", env: dev("YARDSTICK_CORS_ORIGINS=https://a.example,*"),
			wantErr: []string{"list it alone"}},
		{name: "credentials without origins", service: "scoring", env: dev("YARDSTICK_CORS_CREDENTIALS=true"),
			wantErr: []string{"YARDSTICK_CORS_CREDENTIALS=true needs YARDSTICK_CORS_ORIGINS"}},
		{name: "every bad origin at once", service: "scoring",
			env: dev("YARDSTICK_CORS_ORIGINS=https://a.example/,ftp://b.example,https://C.example,https://d.example:443,http://e.example:80,https://f.example:70000,app.example,https://u@g.example,https://h.example?x=1"),
			wantErr: []string{`"https://a.example/": want scheme://host[:port] alone`, `"ftp://b.example": want http://host`,
				`"https://C.example": browsers send it in lower case: https://c.example`,
				`"https://d.example:443": browsers send it without its default port: https://d.example`,
				`"http://e.example:80": browsers send it without its default port`, `"https://f.example:70000": port "70000"`,
				`"app.example": want http://host`, `"https://u@g.example": want scheme://host[:port] alone`, `"https://h.example?x=1"`}},
		{name: "max age over a day", service: "scoring", env: dev("YARDSTICK_CORS_MAX_AGE=24h0m1s"),
			wantErr: []string{"YARDSTICK_CORS_MAX_AGE 24h0m1s: want whole seconds from 0s to 24h"}},
		{name: "max age negative", service: "scoring", env: dev("YARDSTICK_CORS_MAX_AGE=-1s"), wantErr: []string{"YARDSTICK_CORS_MAX_AGE -1s"}},
		{name: "max age not whole seconds", service: "scoring", env: dev("YARDSTICK_CORS_MAX_AGE=1500ms"), wantErr: []string{"YARDSTICK_CORS_MAX_AGE 1.5s"}},
	})
}

// TestCORS: the answers a browser reads, over a real listener: a preflight of an allowed origin
// (204 with the methods, headers and max age), of another origin (403 without a CORS header), a
// call's answer (the origin allowed and the headers a client needs exposed, on errors too), and
// no CORS at all when no origin is configured.
func TestCORS(t *testing.T) {
	t.Parallel()
	const allowed, other = "https://app.example.com", "https://evil.example"
	cfg := testConfig(t)
	cfg.CORSOrigins, cfg.CORSMaxAge = []string{allowed, "http://localhost:5173"}, 90*time.Second
	on := startTest(t, cfg)
	star := testConfig(t)
	star.CORSOrigins = []string{"*"}
	any := startTest(t, star)
	off := startTest(t, testConfig(t))
	preflight := []string{"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type"}
	corsHeaders := []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
		"Access-Control-Max-Age", "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials"}
	const exposed = "Retry-After, RateLimit, RateLimit-Policy, X-Request-Id, WWW-Authenticate"
	for _, tc := range []struct {
		name         string
		h            *harness
		method, path string
		header       []string
		status       int
		want         map[string]string // "" means absent
	}{
		{"preflight of an allowed origin", on, http.MethodOptions, throwawayPath, append([]string{"Origin", allowed}, preflight...), http.StatusNoContent,
			map[string]string{"Access-Control-Allow-Origin": allowed, "Access-Control-Allow-Methods": "GET, HEAD, POST",
				"Access-Control-Allow-Headers": "Authorization, Content-Type, X-Request-Id", "Access-Control-Max-Age": "90",
				"Access-Control-Allow-Credentials": "", "Access-Control-Expose-Headers": ""}},
		{"preflight of a batch path", on, http.MethodOptions, throwawayBatchPath, append([]string{"Origin", "http://localhost:5173"}, preflight...), http.StatusNoContent,
			map[string]string{"Access-Control-Allow-Origin": "http://localhost:5173", "Access-Control-Max-Age": "90"}},
		{"preflight of another origin", on, http.MethodOptions, throwawayPath, append([]string{"Origin", other}, preflight...), http.StatusForbidden, nil},
		{"preflight of an origin differing in port", on, http.MethodOptions, throwawayPath, append([]string{"Origin", "http://localhost:5174"}, preflight...), http.StatusForbidden, nil},
		{"call without a token from an allowed origin", on, http.MethodPost, throwawayPath, []string{"Origin", allowed}, http.StatusUnauthorized,
			map[string]string{"Access-Control-Allow-Origin": allowed, "Access-Control-Expose-Headers": exposed, "Access-Control-Allow-Methods": ""}},
		{"health from an allowed origin", on, http.MethodGet, "/healthz", []string{"Origin", allowed}, http.StatusOK,
			map[string]string{"Access-Control-Allow-Origin": allowed, "Access-Control-Expose-Headers": exposed}},
		{"call from another origin", on, http.MethodPost, throwawayPath, []string{"Origin", other}, http.StatusUnauthorized, nil},
		{"call without Origin", on, http.MethodPost, throwawayPath, nil, http.StatusUnauthorized, nil},
		{"OPTIONS without a preflight's header", on, http.MethodOptions, throwawayPath, []string{"Origin", allowed}, http.StatusMethodNotAllowed,
			map[string]string{"Access-Control-Allow-Origin": allowed}},
		{"star: preflight of any origin", any, http.MethodOptions, throwawayPath, append([]string{"Origin", other}, preflight...), http.StatusNoContent,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Max-Age": "600"}},
		{"star: call", any, http.MethodPost, throwawayPath, []string{"Origin", other}, http.StatusUnauthorized,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": exposed}},
		{"off: preflight", off, http.MethodOptions, throwawayPath, append([]string{"Origin", allowed}, preflight...), http.StatusMethodNotAllowed, nil},
		{"off: call", off, http.MethodPost, throwawayPath, []string{"Origin", allowed}, http.StatusUnauthorized, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.h.do(tc.method, tc.path, "application/json", "{}", tc.header...)
			if r.status != tc.status {
				t.Fatalf("status: got %d; want %d (%s)", r.status, tc.status, r.body)
			}
			want := tc.want
			if want == nil { // no CORS header at all
				want = map[string]string{}
				for _, h := range corsHeaders {
					want[h] = ""
				}
			}
			for h, v := range want {
				if got := r.header.Get(h); got != v {
					t.Errorf("%s: got %q; want %q", h, got, v)
				}
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Errorf("X-Request-Id: got none; want one on every answer")
			}
		})
	}
}

// TestCORSVaryAndCredentials: answers that depend on Origin say so (Vary), and credentials are
// allowed only when configured.
func TestCORSVaryAndCredentials(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.CORSOrigins, cfg.CORSCredentials = []string{"https://app.example.com"}, true
	h := startTest(t, cfg)
	req, err := http.NewRequest(http.MethodOptions, h.base+throwawayPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "true" {
		t.Errorf("Access-Control-Allow-Credentials: got %q; want true", got)
	}
	if vary := strings.Join(resp.Header.Values("Vary"), ", "); !strings.Contains(vary, "Origin") || !strings.Contains(vary, "Access-Control-Request-Headers") {
		t.Errorf("Vary: got %q; want Origin and the preflight's request headers", vary)
	}
}
