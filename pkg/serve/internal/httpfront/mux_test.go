package httpfront

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// calls is a connection that notes the rpcs called on it and answers each with an empty
// message: the in-process channel's place.
type calls struct {
	grpc.ClientConnInterface
	methods []string
}

func (c *calls) Invoke(_ context.Context, method string, _, _ any, _ ...grpc.CallOption) error {
	c.methods = append(c.methods, method)
	return nil
}

// rule is a handler as grpc-gateway generates one for an rpc's HTTP rule: the call annotated
// with its rpc and path pattern, its body decoded, the rpc called on the connection; "" for
// method is a handler that stops before (a rule whose path parameter is missing).
func rule(mux *runtime.ServeMux, conn grpc.ClientConnInterface, method, path string, served *[]string) error {
	return mux.HandlePath(http.MethodPost, path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		*served = append(*served, path)
		in, out := runtime.MarshalerForRequest(mux, r)
		ctx, err := runtime.AnnotateContext(r.Context(), mux, r, method, runtime.WithHTTPPathPattern(path))
		if err != nil || method == "" {
			return
		}
		var req emptypb.Empty
		if err := in.NewDecoder(r.Body).Decode(&req); err != nil {
			runtime.HTTPError(ctx, mux, out, w, r, err)
			return
		}
		if err := conn.Invoke(ctx, method, &req, &emptypb.Empty{}); err != nil {
			runtime.HTTPError(ctx, mux, out, w, r, err)
			return
		}
		runtime.ForwardResponseMessage(ctx, mux, out, w, r, &emptypb.Empty{})
	})
}

// TestDirect: Register names each handler by the rpc and path its code calls and annotates,
// whatever the order of registration, without running any rpc; Direct pairs each with the route
// of its path when the route's rpc is the handler's, and leaves the rest to the mux.
func TestDirect(t *testing.T) {
	t.Parallel()
	g := NewMux(jsonwire.New(jsonwire.Options{}))
	table := &routes.Table{ByPath: map[string]*routes.Route{
		"/api/a": {Method: "/x.S/A"}, "/api/b": {Method: "/x.S/B"}, "/api/c": {Method: "/x.S/C"}, "/api/d": {Method: "/x.S/D"},
	}}
	f := New(Options{Routes: table, Gateway: g})
	conn := &calls{}
	var served []string
	handled, err := g.Register(conn, func(mux *runtime.ServeMux, c grpc.ClientConnInterface) error {
		for _, r := range [][2]string{
			{"/x.S/B", "/api/b"},     // registered before A: order says nothing
			{"/x.S/A", "/api/a"},     //
			{"/x.S/Other", "/api/c"}, // a route of another rpc: left to the mux
			{"", "/api/d"},           // never reaches its rpc: no names, left to the mux
			{"/x.S/E", "/api/e"},     // no route: left to the mux
		} {
			if err := rule(mux, c, r[0], r[1], &served); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range handled {
		names = append(names, h.Method+" "+h.Path)
	}
	if want := []string{"/x.S/B /api/b", "/x.S/A /api/a", "/x.S/Other /api/c", " ", "/x.S/E /api/e"}; !slices.Equal(names, want) {
		t.Errorf("handlers named %q; want %q", names, want)
	}
	if len(conn.methods) != 0 {
		t.Errorf("probing ran rpcs %v; want none", conn.methods)
	}
	var left []string
	for _, h := range f.Direct(handled) {
		left = append(left, h.Path)
	}
	if want := []string{"/api/c", "", "/api/e"}; !slices.Equal(left, want) {
		t.Errorf("left to the mux %v; want %v", left, want)
	}
	if f.direct["/api/c"] != nil || f.direct["/api/d"] != nil {
		t.Error("a handler paired with a route of another rpc, or without names")
	}
	served = nil
	for _, p := range []string{"/api/b", "/api/a"} {
		w := httptest.NewRecorder()
		f.direct[p](w, httptest.NewRequest(http.MethodPost, p, nil), nil)
		if w.Code != http.StatusOK {
			t.Errorf("%s: got %d %s; want 200", p, w.Code, w.Body)
		}
	}
	g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/c", nil))
	if want := []string{"/api/b", "/api/a", "/api/c"}; !slices.Equal(served, want) {
		t.Errorf("served %v; want %v (two direct, then one through the mux)", served, want)
	}
	if want := []string{"/x.S/B", "/x.S/A", "/x.S/Other"}; !slices.Equal(conn.methods, want) {
		t.Errorf("rpcs called %v; want %v: after probing, calls reach the connection", conn.methods, want)
	}
}
