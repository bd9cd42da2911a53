package httpfront

import (
	"context"

	"google.golang.org/grpc"
)

// Call marks a call that came through this process's JSON front, or a batch record of either
// front (WithCall), with the verdict reached on its token. The frame's chain finds it in the
// call's context (CallFrom): it skips the steps the front did already, and takes the verdict.
type Call struct {
	chain grpc.UnaryServerInterceptor
	// authorized is the context authorize returned for this call's method and token (nil for
	// public methods): the interceptor takes it instead of verifying the token a second time.
	authorized context.Context
	method     string // the method authorized was decided for
	// The call's body and its UnaryServerInfo live in the Call, which the front allocates for
	// every call anyway: each was an allocation of its own.
	body frontBody
	info grpc.UnaryServerInfo
}

type callKey struct{}

// CallFrom is the front's Call of ctx, or nil for a call that did not come through the front.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Chain is the interceptor chain the call runs through (serve.Invoke runs it).
func (c *Call) Chain() grpc.UnaryServerInterceptor { return c.chain }

// Authorized is the context the front's authorization returned for method, or nil when the front
// reached no verdict for that very method (a public route, or another method).
func (c *Call) Authorized(method string) context.Context {
	if c.authorized == nil || c.method != method {
		return nil
	}
	return c.authorized
}

// WithCall marks ctx, the context authorization returned for method, as a call whose checks are
// done (a gRPC batch record: the guard read and checked its stream's message, the batch
// admitted it): the chain skips the steps a front does and takes ctx as its verdict.
func WithCall(authorized context.Context, chain grpc.UnaryServerInterceptor, method string) context.Context {
	c := &Call{chain: chain, method: method}
	ctx := context.WithValue(authorized, callKey{}, c)
	c.authorized = ctx
	return ctx
}

// Info is the chain's UnaryServerInfo for method (serve.Invoke runs the chain once a call).
func (c *Call) Info(method string) *grpc.UnaryServerInfo {
	c.info.FullMethod = method
	return &c.info
}
