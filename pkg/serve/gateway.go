package serve

import (
	"context"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/httpfront"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// The JSON front registers the services in-process (grpc-gateway's Register…HandlerServer): no
// second HTTP/2 hop, no protobuf round trip. A gateway registered that way calls the service
// directly and would skip the gRPC interceptors, so each service hands the gateway an adapter
// whose every method is one Invoke: the call then passes the very interceptor a gRPC call passes
// (request info, panic recovery, authentication, the admission budget), and only that one place
// decides.

// Invoke runs a JSON front call of handler through the server's interceptor chain, exactly as a
// gRPC call of the same method would run. Services use it in their gateway adapters:
//
//	func (g gateway) Score(ctx context.Context, r *v1.ScoreRequest) (*v1.Measure, error) {
//		return serve.Invoke(ctx, r, g.s.Score)
//	}
func Invoke[Req, Resp any](ctx context.Context, req Req, handler func(context.Context, Req) (Resp, error)) (Resp, error) {
	var zero Resp
	call := httpfront.CallFrom(ctx)
	method, ok := runtime.RPCMethod(ctx)
	if call == nil || !ok {
		return zero, rpcerr.Internal() // only the front's own routes reach here
	}
	out, err := call.Chain()(ctx, req, call.Info(method),
		func(ctx context.Context, r any) (any, error) { return handler(ctx, r.(Req)) })
	if err != nil {
		return zero, err
	}
	return out.(Resp), nil
}

// tokenGateway is the token service's gateway adapter.
type tokenGateway struct {
	authv1.UnimplementedTokenServiceServer
	t authv1.TokenServiceServer
}

func (g tokenGateway) IssueToken(ctx context.Context, r *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	return Invoke(ctx, r, g.t.IssueToken)
}
