package grpcguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// StreamInterceptor guards the streaming methods: health watch and reflection (public), and the
// batch streams (Route.Records), with a unary call's rules per message. A batch stream, admitted
// for its life in the tap handle, is ended DEADLINE_EXCEEDED after StreamIdle with no message
// received and no answer sent (a caller that takes no answer blocks the sends, then the reads).
// Its log line carries the handler's reqinfo.Info.Stream (its counts).
func (g *Guard) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, start := ss.Context(), time.Now()
	call := callFrom(ctx)
	g.markLogged(call) // this function logs and counts it, not the sweep of ended calls
	rt := g.routes.ByMethod[info.FullMethod]
	records := rt.Records // the tap handle let in served methods only
	idle := g.ReadTimeout // how long the call may go without a message; a batch stream has its own
	if d := g.StreamIdle; d > 0 && records {
		idle = d
	}
	defer func() {
		// grpc-go recovers nothing and a stream runs no unary chain: the goroutine's one net.
		if p := recover(); p != nil {
			g.Log.Error("panic in stream handler", "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			err = rpcerr.Internal()
		}
		if call.timedOut.Load() && err != nil && status.Code(err) != codes.DeadlineExceeded {
			err = status.Error(codes.DeadlineExceeded, fmt.Sprintf("the stream sent no message, and took no answer, for %s (cut off)", idle))
		}
		g.logCall(ctx, err, false, time.Since(start))
	}()
	defer call.releaseTicket() // its place of the client's concurrency, and a batch stream's reserve
	if p := call.ticket.Policy; p != "" {
		_ = ss.SetHeader(metadata.MD{quota.PolicyMD: {p}})
	}
	handlerCtx, soft := context.WithCancelCause(ctx)
	defer soft(nil)
	gs := &guardedStream{ServerStream: ss, ctx: handlerCtx, call: call, route: rt, streams: info.IsClientStream, idle: idle}
	// The call's end, by its timer or its rights: first the handler's context, which a batch
	// stream's engine watches, so the caller learns why; then the call, if the handler is still
	// blocked a grace later.
	var ended atomic.Bool
	end := func(why error) {
		soft(why)
		time.AfterFunc(idleGrace, func() {
			if !ended.Load() {
				call.cancel()
			}
		})
	}
	gs.quiet = time.AfterFunc(gs.idle-time.Since(call.start), func() {
		call.timedOut.Store(true)
		if !records {
			soft(errIdle)
			call.cancel() // health and reflection: their handlers wait in a read; their slots go back now
			return
		}
		end(errIdle)
	})
	defer ended.Store(true)
	defer gs.quiet.Stop()
	// The stream's rights, checked again at each reload and at its token's expiry: once gone, it
	// ends as on the idle limit, with the status a call would get now.
	g.Gate.Authz.Watch(handlerCtx, rt, authz.BearerFromMetadata(ctx), end)
	err = handler(srv, gs)
	cause := context.Cause(handlerCtx)
	if denied, ok := authz.RevokedErr(cause); ok && err != nil {
		return denied // whatever the handler made of its context's end
	}
	if err != nil && errors.Is(cause, errIdle) {
		// The handler ended on the idle limit's cause, before the call had to be cut off.
		err = status.Error(codes.DeadlineExceeded, fmt.Sprintf("the stream sent no message, and took no answer, for %s", idle))
	}
	return err
}

var errIdle = errors.New("the stream was idle for its limit")

// idleGrace is how long a stream's handler has, once its context has ended on the idle limit, to
// return with DEADLINE_EXCEEDED before the call itself is cancelled (a handler blocked in a read
// sees only that: the caller then gets CANCELLED).
const idleGrace = time.Second

// guardedStream checks each message a streaming call reads, gives the read slot back once a call
// that reads one message has read it, and puts the call's timer off while the call makes progress.
type guardedStream struct {
	grpc.ServerStream
	ctx     context.Context
	call    *call // the call the tap handle made
	route   *routes.Route
	streams bool // the client streams messages
	idle    time.Duration
	quiet   *time.Timer
}

func (g *guardedStream) Context() context.Context { return g.ctx }

func (g *guardedStream) RecvMsg(m any) error {
	var w wireMessage // read as bytes, checked, then decoded into m (message.go)
	err := g.ServerStream.RecvMsg(&w)
	switch {
	case g.streams && (err == nil || errors.Is(err, io.EOF)):
		g.quiet.Reset(g.idle) // after the last message, the answers must still be taken
	case err == nil:
		g.quiet.Stop()
	}
	if err == nil {
		err = receiveStreamed(g.route, &w, m)
	}
	if err == nil {
		// Its client's rate (the pacer of quota.OpenStream): a message waits, never refused.
		err = quota.Pace(g.ctx)
	}
	w.free()
	if !g.streams {
		g.call.giveSlot() // one message, and gRPC has checked that no second one follows
	}
	return err
}

// SendMsg sends an answer; one taken by the caller's flow control is progress, as a message is.
func (g *guardedStream) SendMsg(m any) error {
	err := g.ServerStream.SendMsg(m)
	if err == nil && g.streams {
		g.quiet.Reset(g.idle)
	}
	return err
}
