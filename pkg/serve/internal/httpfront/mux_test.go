package httpfront

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// TestNewFindsEachRoutesHandler: New finds the gateway's handler of each unary path, the one the
// mux runs for it, and none for a path the mux does not serve or a stream's; the mux serves as
// before once New has asked it.
func TestNewFindsEachRoutesHandler(t *testing.T) {
	g := NewMux(jsonwire.New(jsonwire.Options{}))
	var served []string
	for _, p := range []string{"/api/a", "/api/b", "/api/stream"} {
		if err := g.HandlePath(http.MethodPost, p, func(http.ResponseWriter, *http.Request, map[string]string) {
			served = append(served, p)
		}); err != nil {
			t.Fatal(err)
		}
	}
	tbl := &routes.Table{ByPath: map[string]*routes.Route{"/api/a": {Path: "/api/a"}, "/api/b": {Path: "/api/b"},
		"/api/none": {Path: "/api/none"}, "/api/stream": {Path: "/api/stream", Stream: routes.Batch}}}
	f := New(tbl, nil, nil, nil, g)
	if len(served) != 0 {
		t.Fatalf("asking the mux ran %v", served)
	}
	if len(f.direct) != 2 || f.direct["/api/a"] == nil || f.direct["/api/b"] == nil {
		t.Fatalf("direct handlers for %v; want /api/a and /api/b", slices.Collect(maps.Keys(f.direct)))
	}
	f.direct["/api/b"](httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/b", nil), nil)
	g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/a", nil))
	if !slices.Equal(served, []string{"/api/b", "/api/a"}) {
		t.Errorf("served %v; want /api/b (direct), then /api/a (through the mux)", served)
	}
}
