package quota

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
)

// Header names, as gRPC metadata (lower case) and as the JSON front writes them.
const (
	PolicyHeader = "RateLimit-Policy"
	StateHeader  = "RateLimit"
	policyMD     = "ratelimit-policy"
	stateMD      = "ratelimit"
)

// Decided is ctx marked as a call whose limits were applied already (by the JSON front before
// it read the body, or by the gRPC door's Step before the message step), which the chain's step
// passes. The mark is on the request's facts (reqinfo.Info), which every call a door lets in
// carries: no allocation. A call without them meets the step once only, and needs none.
func Decided(ctx context.Context) context.Context {
	if ri := reqinfo.From(ctx); ri != nil {
		ri.LimitsDecided = true
	}
	return ctx
}

// Step is the interceptor chain's step for unary calls, whichever door they came by: after
// authenticate (the client is known), before the handler. A call without a client (a public
// method), one a door decided already (Decided) and a stream's record (its context carries the
// stream's pacer: paced, never refused) pass through. A call it counted goes on marked Decided,
// so that it is counted once. The headers go out as the call's header metadata.
func (l *Limiter) Step(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	// The most common pass first: a JSON call the front decided.
	if ri := reqinfo.From(ctx); (ri != nil && ri.LimitsDecided) || ctx.Value(paceKey{}) != nil {
		return next(ctx, req)
	}
	client := l.cfg.Client(ctx)
	if client == "" {
		return next(ctx, req)
	}
	out := l.Admit(client)
	if out.Policy != "" {
		_ = grpc.SetHeader(ctx, metadata.MD{policyMD: {out.Policy}, stateMD: {out.State}})
	}
	if out.Err != nil {
		return nil, out.Err
	}
	defer out.Done()
	return next(Decided(ctx), req)
}
