package quota

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Header names, as gRPC metadata (lower case) and as the JSON front writes them.
const (
	PolicyHeader = "RateLimit-Policy"
	StateHeader  = "RateLimit"
	policyMD     = "ratelimit-policy"
	stateMD      = "ratelimit"
)

// HTTPHeader is the HTTP name of a metadata key this package sets ("ratelimit" → "RateLimit"),
// for the JSON front's outgoing header matcher; ok is false for any other key.
func HTTPHeader(key string) (string, bool) {
	switch key {
	case policyMD:
		return PolicyHeader, true
	case stateMD:
		return StateHeader, true
	}
	return "", false
}

// Step is the interceptor chain's step for unary calls of either front: after authenticate (the
// client is known), before the message is read or decoded for a direct gRPC call. A call without
// a client (a public method) and a stream's record (paced by its stream instead, never refused)
// pass through. The headers go out as the call's header metadata: a gRPC caller reads them
// there, and the JSON front writes them as HTTP headers, on the answer and on an error alike.
func (l *Limiter) Step(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	client := l.cfg.Client(ctx)
	if client == "" || ctx.Value(paceKey{}) != nil {
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
	return next(ctx, req)
}
