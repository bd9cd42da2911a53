package httpfront

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// NewMux is grpc-gateway's mux as the front uses it: the codec's marshaler for every media type,
// the error handlers that write the documented error body, and no header of the caller's
// forwarded into gRPC metadata. The services register their routes on its ServeMux.
func NewMux(codec *jsonwire.Codec) *Gateway {
	g := &Gateway{}
	g.ServeMux = runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler{codec: codec}),
		runtime.WithErrorHandler(gatewayErrorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMiddlewares(g.probeable),
	)
	return g
}

// Gateway is the gateway's mux, able to say which of its handlers serves a path. The mux finds a
// request's handler by trying each route's pattern in turn (two allocations and a little CPU a
// pattern that does not match: a dozen allocations a call for a route registered early); the
// front, which has found the route already, calls the handler the mux would have chosen.
type Gateway struct {
	*runtime.ServeMux
	probing bool                // set while handlerOf asks the mux, before serving
	found   runtime.HandlerFunc // the handler the mux chose for the path asked
}

// probeable wraps each handler the services register: while probing, the handler the mux chose
// is noted instead of run.
func (g *Gateway) probeable(h runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if g.probing {
			g.found = h
			return
		}
		h(w, r, params)
	}
}

// handlerOf is the handler the mux runs for a POST to path (none of the contract's paths has a
// variable), or nil. Called before serving: probing is not safe with requests in flight.
func (g *Gateway) handlerOf(path string) runtime.HandlerFunc {
	g.probing, g.found = true, nil
	defer func() { g.probing, g.found = false, nil }()
	g.ServeHTTP(discard{}, &http.Request{Method: http.MethodPost, URL: &url.URL{Path: path}, Header: http.Header{}})
	return g.found
}

// discard is the writer of a probe, whose answer (a 404 when no handler serves the path) is
// dropped.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// incomingHeader forwards no caller header into the gateway's metadata: the front hands the
// chain what it needs in the context (request info, caller address, its authorization verdict),
// and a caller must not reach the gRPC side's metadata (Grpc-Metadata-* headers would).
func incomingHeader(string) (string, bool) { return "", false }

// gatewayErrorHandler is the gateway's one error handler: every gRPC error and decoding error of the
// JSON front is written as the documented body.
func gatewayErrorHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if ri := reqinfo.From(ctx); ri != nil && ri.DecodeErr != nil {
		err = decodeProblems(ri.DecodeErr)
	}
	rpcerr.Write(w, rpcerr.ToHTTP(err))
}

// decodeProblems turns the JSON front's decoding error into the validation error a handler's
// problems become, so both are keyed and worded alike.
func decodeProblems(err error) error {
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

// routingErrorHandler answers paths and methods the gateway has no route for.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
	rpcerr.WriteStatus(w, code)
}
