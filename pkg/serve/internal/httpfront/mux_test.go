package httpfront

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// TestDirect: Register hands back the handlers one registration added, in order; Direct pairs
// them with the contract's paths one for one, and leaves a registration that does not pair up
// to the mux; the mux serves every path as before.
func TestDirect(t *testing.T) {
	t.Parallel()
	g := NewMux(jsonwire.New(jsonwire.Options{}))
	var served []string
	register := func(paths ...string) func(*runtime.ServeMux) error {
		return func(mux *runtime.ServeMux) error {
			for _, p := range paths {
				if err := mux.HandlePath(http.MethodPost, p, func(http.ResponseWriter, *http.Request, map[string]string) {
					served = append(served, p)
				}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	f := New(Options{Routes: &routes.Table{ByPath: map[string]*routes.Route{}}, Gateway: g})
	first, err := g.Register(register("/api/a", "/api/b"))
	if err != nil || len(first) != 2 {
		t.Fatalf("got %d handlers, %v; want 2", len(first), err)
	}
	second, err := g.Register(register("/api/c"))
	if err != nil || len(second) != 1 {
		t.Fatalf("got %d handlers, %v; want 1", len(second), err)
	}
	if len(served) != 0 {
		t.Fatalf("registering ran %v", served)
	}
	if !f.Direct([]string{"/api/a", "/api/b"}, first) {
		t.Error("two paths, two handlers: not paired")
	}
	if f.Direct([]string{"/api/c", "/api/d"}, second) || f.direct["/api/c"] != nil {
		t.Error("two paths, one handler: paired; want them left to the mux")
	}
	f.direct["/api/b"](httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/b", nil), nil)
	f.direct["/api/a"](httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/a", nil), nil)
	g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/c", nil))
	if want := []string{"/api/b", "/api/a", "/api/c"}; !slices.Equal(served, want) {
		t.Errorf("served %v; want %v (two direct, then one through the mux)", served, want)
	}
}
