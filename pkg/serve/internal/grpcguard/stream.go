package grpcguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// StreamInterceptor guards the streaming methods: health watch and reflection (public), and the
// batch streams of issue 21 (Route.Records). Same rules as a unary call, per message. A batch
// stream is also admitted once for its whole life (admission.Stream, in its context for the
// records it runs; refused RESOURCE_EXHAUSTED... as an over-budget call is), and ended after
// StreamIdle without a message from the caller (its reading of answers included: a caller that
// takes none stops the stream's reads). Its log line carries what the handler put in the
// request's reqinfo.Info.Stream (its counts).
func (g *Guard) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, start := ss.Context(), time.Now()
	call := callFrom(ctx)
	g.markLogged(call) // this function logs and counts it, not the sweep of ended calls
	md, _ := metadata.FromIncomingContext(ctx)
	ri := &reqinfo.Info{ID: telemetry.RequestIDFrom(first(md.Get(telemetry.RequestIDHeader))), Route: info.FullMethod}
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("panic in stream handler", "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			err = rpcerr.Internal()
		}
		if call != nil && call.timedOut.Load() && err != nil {
			err = status.Error(codes.DeadlineExceeded, fmt.Sprintf("the stream sent no message, or took no answer, for %s", g.idleOf(info.FullMethod)))
		}
		g.telemetry.Write(ctx, telemetry.Line{Front: "grpc", Route: info.FullMethod, RequestID: ri.ID, ClientID: authz.ClientID(ctx),
			Code: status.Code(err).String(), Failed: err != nil, Level: telemetry.GRPCLevel(status.Code(err)), Took: time.Since(start), Extra: ri.Stream})
	}()
	if !tapAuthorized(ctx, call, info.FullMethod) {
		authorized, err := g.authz.Authorize(ctx, g.routes.ByMethod[info.FullMethod], authz.BearerFromMetadata(ctx))
		if err != nil {
			return err
		}
		ctx = authorized
	}
	ctx = reqinfo.With(ctx, ri)
	if rt := g.routes.ByMethod[info.FullMethod]; rt != nil && rt.Records {
		adm, ok := g.budget.AdmitStream("grpc")
		if !ok {
			return rpcerr.Overloaded(admission.RetryAfter)
		}
		defer adm.Release()
		ctx = admission.WithStream(ctx, adm)
	}
	guarded, stop := g.guardStream(ctx, ss, info)
	defer stop()
	return handler(srv, guarded)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// idleOf is how long a streaming call may go without a message: a batch stream's idle limit, or
// the read timeout.
func (g *Guard) idleOf(method string) time.Duration {
	if rt := g.routes.ByMethod[method]; rt != nil && rt.Records && g.streamIdle > 0 {
		return g.streamIdle
	}
	return g.readTimeout
}

// guardedStream checks each message a streaming call reads, as the unary interceptor checks a
// unary call's, and gives the read slot back once a call that reads one message has read it. Its
// timer ends a call whose message has not come within the read timeout, and a client-streaming
// call that has sent nothing for that long (a batch stream: its idle limit; stopped once the
// caller has sent its last message).
type guardedStream struct {
	grpc.ServerStream
	ctx     context.Context
	guard   *Guard
	method  string
	streams bool // the client streams messages
	idle    time.Duration
	quiet   *time.Timer
}

func (g *guardedStream) Context() context.Context { return g.ctx }

func (g *guardedStream) RecvMsg(m any) error {
	err := g.ServerStream.RecvMsg(m)
	c := callFrom(g.ctx)
	if g.quiet != nil {
		switch {
		case err == nil && g.streams:
			g.quiet.Reset(g.idle)
		case err == nil, errors.Is(err, io.EOF):
			g.quiet.Stop() // nothing more will come: the answers are the handler's to finish
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

// guardStream wraps a streaming call, which runs with ctx; stop ends its timer when the call ends.
func (g *Guard) guardStream(ctx context.Context, ss grpc.ServerStream, info *grpc.StreamServerInfo) (_ grpc.ServerStream, stop func()) {
	gs := &guardedStream{ServerStream: ss, ctx: ctx, guard: g, method: info.FullMethod, streams: info.IsClientStream, idle: g.idleOf(info.FullMethod)}
	if c := callFrom(ctx); c != nil && c.cancel != nil {
		gs.quiet = time.AfterFunc(gs.idle-time.Since(c.start), func() {
			c.timedOut.Store(true)
			c.cancel()
		})
		return gs, func() { gs.quiet.Stop() }
	}
	return gs, func() {}
}
