package httpfront

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// NewMux is grpc-gateway's mux as the front uses it: the error handlers that write the documented
// error body, and no header forwarded.
func NewMux() *Mux {
	m := &Mux{}
	m.ServeMux = runtime.NewServeMux(
		runtime.WithErrorHandler(gatewayErrorHandler),
		runtime.WithRoutingErrorHandler(m.routingError),
		runtime.WithIncomingHeaderMatcher(noHeader),
		runtime.WithOutgoingHeaderMatcher(noHeader),
	)
	return m
}

// Mux is the gateway's mux: it answers the 404 and 405 of paths and methods with no route.
type Mux struct {
	*runtime.ServeMux
	Suggest func(path string) string // the documented path nearest to an unknown one, or "" (Handler.NearestPath); nil: none
}

// noHeader forwards no header either way: the front hands the chain what it needs in the context
// (request info, caller address, the token's verdict), and a caller must not reach the gRPC
// side's metadata, as Grpc-Metadata-* headers would.
func noHeader(string) (string, bool) { return "", false }

func gatewayErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	rpcerr.Write(w, rpcerr.ToHTTP(err))
}

// DecodeProblems turns a decoding error of the JSON front (or of a group stream's line) into the
// validation error a handler's problems become, keyed and worded alike.
func DecodeProblems(err error) error {
	var wire *jsoncodec.Error
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

func (m *Mux) routingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	if code == http.StatusNotFound {
		rpcerr.Write(w, notFound(r.URL.Path, m.Suggest))
		return
	}
	rpcerr.WriteStatus(w, code)
}

// servedBy is the service that serves each path of the contract (http.yaml), as its package names
// it (the token path, served by all, left out): a caller that sends a path to the wrong service is
// told where it belongs, not only that it is unknown here.
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
