package grpcguard

import (
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// StreamInterceptor guards the streaming methods (health watch, reflection): same rules, no body.
func (g *Guard) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, start := ss.Context(), time.Now()
	call := callFrom(ctx)
	g.markLogged(call) // this function logs and counts it, not the sweep of ended calls
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("panic in stream handler", "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			err = rpcerr.Internal()
		}
		md, _ := metadata.FromIncomingContext(ctx)
		g.logCall(ctx, md, info.FullMethod, authz.ClientID(ctx), err, time.Since(start))
	}()
	if !tapAuthorized(ctx, call, info.FullMethod) {
		if _, err := g.authz.Authorize(ctx, g.routes.ByMethod[info.FullMethod], authz.BearerFromMetadata(ctx)); err != nil {
			return err
		}
	}
	guarded, stop := g.guardStream(ss, info)
	defer stop()
	return handler(srv, guarded)
}

// guardedStream checks each message a streaming call reads, as the unary interceptor checks a
// unary call's, and gives the read slot back once a call that reads one message has read it. Its
// timer ends a call whose message has not come within the read timeout, and a client-streaming
// call (reflection) that has sent nothing for that long.
type guardedStream struct {
	grpc.ServerStream
	guard   *Guard
	method  string
	streams bool // the client streams messages
	quiet   *time.Timer
}

func (g *guardedStream) RecvMsg(m any) error {
	err := g.ServerStream.RecvMsg(m)
	c := callFrom(g.Context())
	if g.quiet != nil && err == nil {
		if g.streams {
			g.quiet.Reset(g.guard.readTimeout)
		} else {
			g.quiet.Stop()
		}
	}
	if err == nil {
		var r received
		if r, err = g.guard.checkReceived(g.method, m); err == nil {
			// Streams are the calls without a token, read within their slots: nothing to admit.
			if g.guard.codec.decodeRaw(&r, m); r.refused != nil {
				err = r.refused
			}
		}
	}
	if c != nil && !g.streams {
		c.release(g.guard) // one message, and gRPC has checked that no second one follows
	}
	return err
}

// guardStream wraps a streaming call; stop ends its timer when the call ends.
func (g *Guard) guardStream(ss grpc.ServerStream, info *grpc.StreamServerInfo) (_ grpc.ServerStream, stop func()) {
	gs := &guardedStream{ServerStream: ss, guard: g, method: info.FullMethod, streams: info.IsClientStream}
	if c := callFrom(ss.Context()); c != nil && c.cancel != nil {
		gs.quiet = time.AfterFunc(g.readTimeout-time.Since(c.start), func() {
			c.timedOut.Store(true)
			c.cancel()
		})
		return gs, func() { gs.quiet.Stop() }
	}
	return gs, func() {}
}
