package httpfront

import (
	"context"
	"errors"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// NewMux is grpc-gateway's mux as the front uses it: the codec's marshaler for every media type,
// the error handlers that write the documented error body, and no header of the caller's
// forwarded into gRPC metadata. The services register their routes on it.
func NewMux(codec *jsonwire.Codec) *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler{codec: codec}),
		runtime.WithErrorHandler(gatewayErrorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
	)
}

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
