package httpfront

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// NewMux is grpc-gateway's mux as the front uses it: the codec's marshaler for every media type,
// the error handlers that write the documented error body, and no header forwarded.
func NewMux(codec *jsonwire.Codec) *Mux {
	m := &Mux{}
	m.ServeMux = runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler{codec: codec}),
		runtime.WithErrorHandler(gatewayErrorHandler),
		runtime.WithRoutingErrorHandler(m.routingError),
		runtime.WithIncomingHeaderMatcher(noHeader),
		runtime.WithOutgoingHeaderMatcher(noHeader),
		runtime.WithMiddlewares(m.keep),
	)
	return m
}

// Mux is the gateway's mux, with each route's handler as it was registered. The mux finds a
// request's handler by trying each route's pattern in turn (two allocations and a little CPU a
// pattern that does not match: a dozen allocations a call for a route registered early); the
// front, which has found the route already, calls the route's handler itself.
type Mux struct {
	*runtime.ServeMux
	registered []runtime.HandlerFunc // every handler registered, in order (keep)
	// Suggest is the documented path nearest to an unknown one, or "" (Handler.NearestPath);
	// nil: no suggestion.
	Suggest func(path string) string
}

// keep notes each handler as the mux registers it (grpc-gateway applies middlewares when a
// route is registered), and leaves it as it is: nothing is added to a call.
func (m *Mux) keep(h runtime.HandlerFunc) runtime.HandlerFunc {
	m.registered = append(m.registered, h)
	return h
}

// Handled is a handler the gateway registered, named as its generated code names its call: the
// rpc (grpc-gateway's RPCMethod) and the path of its HTTP rule (HTTPPathPattern). Both are ""
// when the handler never reached its rpc with a probe (a rule with path parameters).
type Handled struct {
	Method, Path string
	Handler      runtime.HandlerFunc
}

// Register runs register, the generated Register…HandlerClient of services, on the mux with a
// client connection over conn, and names each handler it registered by calling it once with a
// probe: the generated code annotates its call with its rpc and its path pattern and calls the
// rpc on the connection, which takes the names and answers the probe with an error, so no rpc
// runs. Which handler serves which path is what the generated code says, in whatever order it
// registered them.
func (m *Mux) Register(conn grpc.ClientConnInterface, register func(*runtime.ServeMux, grpc.ClientConnInterface) error) ([]Handled, error) {
	before := len(m.registered)
	pc := &probeConn{ClientConnInterface: conn}
	if err := register(m.ServeMux, pc); err != nil {
		return nil, err
	}
	out := make([]Handled, 0, len(m.registered)-before)
	pc.on.Store(true)
	defer pc.on.Store(false)
	for _, h := range m.registered[before:] {
		p := &probe{}
		r, err := http.NewRequestWithContext(context.WithValue(context.Background(), probeKey{}, p), http.MethodPost, "/", strings.NewReader("{}"))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		h(discard{}, r, nil)
		out = append(out, Handled{Method: p.method, Path: p.path, Handler: h})
	}
	return out, nil
}

// discard is a probe's response writer: a probe's answer is the error that ended it.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// probeConn is the gateway's connection: conn, and while the handlers are probed, the probes'
// end. Calls pay one atomic load for it.
type probeConn struct {
	grpc.ClientConnInterface
	on atomic.Bool
}

type (
	probeKey struct{}
	probe    struct{ method, path string }
)

// errProbe ends a probe's call where the rpc would start.
var errProbe = status.Error(codes.Canceled, "httpfront: a probe of the registered handlers")

func (c *probeConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if c.on.Load() && c.took(ctx, method) {
		return errProbe
	}
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

func (c *probeConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if c.on.Load() && c.took(ctx, method) {
		return nil, errProbe
	}
	return c.ClientConnInterface.NewStream(ctx, desc, method, opts...)
}

// took notes the call's names in its probe, if it is one.
func (c *probeConn) took(ctx context.Context, method string) bool {
	p, ok := ctx.Value(probeKey{}).(*probe)
	if ok {
		p.method = method
		p.path, _ = runtime.HTTPPathPattern(ctx)
	}
	return ok
}

// noHeader forwards no header either way: the front hands the chain what it needs in the context
// (request info, caller address, the token's verdict), and a caller must not reach the gRPC
// side's metadata, as Grpc-Metadata-* headers would.
func noHeader(string) (string, bool) { return "", false }

// gatewayErrorHandler is the gateway's one error handler: every gRPC error and decoding error of the
// JSON front is written as the documented body.
func gatewayErrorHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if ri := reqinfo.From(ctx); ri != nil && ri.DecodeErr != nil {
		err = DecodeProblems(ri.DecodeErr)
	}
	rpcerr.Write(w, rpcerr.ToHTTP(err))
}

// DecodeProblems turns the JSON front's decoding error into the validation error a handler's
// problems become, so both are keyed and worded alike (a group stream's lines, decoded by the
// service, too).
func DecodeProblems(err error) error {
	var wire *jsonwire.Error
	if !errors.As(err, &wire) {
		return rpcerr.Invalid("", "request body could not be read: %v", err)
	}
	var p rpcerr.Problems
	for _, pr := range wire.Problems {
		p.Add(pr.Path, "%s", pr.Message)
	}
	p.Dropped(wire.Dropped) // the decoder lists no more than rpcerr.Problems does, and counts the rest
	return p.Err()
}

// routingError answers paths and methods the gateway has no route for.
func (m *Mux) routingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	if code == http.StatusNotFound {
		rpcerr.Write(w, notFound(r.URL.Path, m.Suggest))
		return
	}
	rpcerr.WriteStatus(w, code)
}

// servedBy is, for every path of the contract (http.yaml), the service that serves it, as the
// contract's package names it (the token path is served by every service and left out): a caller that sends a
// path to the wrong service is told where it belongs instead of only that it is unknown here.
var servedBy = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	routes, err := yardstick.Routes()
	if err != nil {
		return out // the frame refuses to start on a contract it cannot read; nothing to add here
	}
	for _, r := range routes {
		// "/yardstick.<service>.v1.<Service>/…": the package's second part names it.
		parts := strings.Split(strings.TrimPrefix(r.FullMethod, "/"), ".")
		if len(parts) > 2 && parts[1] != "auth" {
			out[r.Path] = parts[1]
		}
	}
	return out
})

// notFound is the 404 of a path this service does not serve, naming the service that serves it
// when the contract has one, else the documented path nearest to it when suggest finds one.
func notFound(path string, suggest func(string) string) rpcerr.HTTP {
	e := rpcerr.HTTP{Status: http.StatusNotFound, Body: rpcerr.BodyFor(http.StatusNotFound, nil)}
	if svc, ok := servedBy()[strings.TrimSuffix(path, "/")]; ok {
		e.Body.AdditionalInfo = "This path is served by the " + svc + " service, not this one: send it there, with a token of that service."
	} else if suggest != nil {
		if near := suggest(path); near != "" {
			e.Body.AdditionalInfo = "No endpoint has this path; did you mean " + near + "? See /openapi.json."
		}
	}
	return e
}
