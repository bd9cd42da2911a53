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

// Decided is ctx marked as a call whose limits the JSON front applied before it read the body
// (its slot is the front's to end): the chain's step passes it, as the authenticate step takes
// the front's verdict on the token. The mark is on the request's facts (reqinfo.Info,
// LimitsDecided) when ctx has them, which costs no allocation; else a value of its own.
func Decided(ctx context.Context) context.Context {
	if ri := reqinfo.From(ctx); ri != nil {
		ri.LimitsDecided = true
		return ctx
	}
	return context.WithValue(ctx, decidedKey{}, true)
}

// decided reports whether the JSON front applied the limits of the call ctx is (Decided).
func decided(ctx context.Context) bool {
	if ri := reqinfo.From(ctx); ri != nil && ri.LimitsDecided {
		return true
	}
	return ctx.Value(decidedKey{}) != nil
}

type decidedKey struct{}

// Step is the interceptor chain's step for unary calls, whichever door they came by: after
// authenticate (the client is known), before the handler. A call without a client (a public
// method), one a door decided already (Decided: the JSON front before it read the body, the
// gRPC door before the message step, which runs this same Step early) and a stream's record
// (its context, the stream's, carries the pacer: paced by its stream, never refused) pass
// through. A call it counted goes on marked Decided, so that it is counted once. The headers go
// out as the call's header metadata.
func (l *Limiter) Step(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	// Each check walks the context; the most common pass first: a JSON call the front decided.
	if decided(ctx) || ctx.Value(paceKey{}) != nil {
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
	if out.Policy == "" && out.slot == nil {
		// A client without limits: nothing was counted, and a later step finds the same
		// without a mark (which would cost an allocation where the call has no reqinfo.Info).
		return next(ctx, req)
	}
	defer out.Done()
	return next(Decided(ctx), req)
}
