package apidocs

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func get(t *testing.T, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	h := Handler(path)
	if h == nil {
		t.Fatalf("Handler(%q) is nil; want the page's handler", path)
	}
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h(w, r)
	return w
}

func TestPaths(t *testing.T) {
	t.Parallel()
	want := []string{"/docs", "/docs/", "/docs/favicon-32x32.png", "/docs/init.js", "/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"}
	if got := slices.Sorted(maps.Keys(assets)); !slices.Equal(got, want) {
		t.Errorf("paths served: got %v; want %v", got, want)
	}
	for _, p := range []string{"/doc", "/docsx", "/docs/nosuch.js", "/docs/index.html", "/openapi.json", "/docs/LICENSE", "/"} {
		if Handler(p) != nil {
			t.Errorf("Handler(%q): got a handler; want nil (the caller answers 404)", p)
		}
	}
}

func TestServesEachFile(t *testing.T) {
	t.Parallel()
	cases := []struct{ path, contentType, contains string }{
		{"/docs", "text/html; charset=utf-8", `<div id="swagger-ui">`},
		{"/docs/", "text/html; charset=utf-8", `<div id="swagger-ui">`},
		{"/docs/init.js", "text/javascript; charset=utf-8", `url: "/openapi.json"`},
		{"/docs/swagger-ui-bundle.js", "text/javascript; charset=utf-8", `PACKAGE_VERSION:"5.35.0"`},
		{"/docs/swagger-ui.css", "text/css; charset=utf-8", ".swagger-ui"},
		{"/docs/favicon-32x32.png", "image/png", "PNG"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			w := get(t, http.MethodGet, c.path)
			if w.Code != http.StatusOK {
				t.Fatalf("status: got %d; want 200", w.Code)
			}
			if got := w.Header().Get("Content-Type"); got != c.contentType {
				t.Errorf("Content-Type: got %q; want %q", got, c.contentType)
			}
			if got := w.Header().Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") || !strings.Contains(got, "script-src 'self'") {
				t.Errorf("Content-Security-Policy: got %q; want only this origin's scripts", got)
			}
			if !strings.Contains(w.Body.String(), c.contains) {
				t.Errorf("body lacks %q", c.contains)
			}
			head := get(t, http.MethodHead, c.path)
			if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != w.Header().Get("Content-Length") {
				t.Errorf("HEAD: got %d with %d bytes, length %q; want 200, no body, length %q", head.Code, head.Body.Len(), head.Header().Get("Content-Length"), w.Header().Get("Content-Length"))
			}
			again := get(t, http.MethodGet, c.path, "If-None-Match", w.Header().Get("ETag"))
			if again.Code != http.StatusNotModified {
				t.Errorf("GET with the ETag: got %d; want 304", again.Code)
			}
		})
	}
}

// TestPageLoadsOnlyLocalFiles: the page and its initializer name no other origin, and every file
// the page references is served.
func TestPageLoadsOnlyLocalFiles(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/docs", "/docs/init.js"} {
		body := get(t, http.MethodGet, p).Body.String()
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).FindString(body); m != "" {
			t.Errorf("%s names another origin: %q", p, m)
		}
	}
	page := get(t, http.MethodGet, "/docs").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != 4 {
		t.Errorf("page references %d files; want 4 (css, icon, bundle, init)", len(refs))
	}
	for _, m := range refs {
		if Handler(m[1]) == nil {
			t.Errorf("page references %s, which is not served", m[1])
		}
	}
}

// TestPinnedVersion: the vendored files are the version vendor.sh pins.
func TestPinnedVersion(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("dist/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("vendor.sh")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(raw))
	if v != "5.35.0" || !strings.Contains(string(script), "VERSION="+v+"\n") {
		t.Errorf("dist/VERSION %q; want 5.35.0, as vendor.sh pins", v)
	}
	if !strings.Contains(string(assets["/docs/swagger-ui-bundle.js"].body), `PACKAGE_VERSION:"`+v+`"`) {
		t.Errorf("the embedded bundle is not swagger-ui %s", v)
	}
}
