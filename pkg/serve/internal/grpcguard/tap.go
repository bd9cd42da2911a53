package grpcguard

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// tapHandle runs on each call's headers, in the connection's reader goroutine, before the call's
// stream exists and before a byte of its message is read: the call's one admission by the gate,
// whose ticket the call keeps (call.ticket). It must not block, for while it runs no other stream
// of the connection is read: a call over the in-flight cap is refused at once, not queued; the
// gate's parts here decide without the network (gate.Call.Local: the token is CPU alone, the
// limits refuse rather than queue), a rate shared through Redis is decided in the call's own
// goroutine before its message is read (admitRead), and the budget of the message, which may
// wait, is admitted once gRPC holds it (Receive).
func (g *Guard) tapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	method := info.FullMethodName
	r, served := g.routes.ByMethod[method]
	if !served {
		return ctx, nil // gRPC answers Unimplemented and reads nothing
	}
	// The request's facts, which the call's line reads and the verdict on its token notes the
	// client in; its id is the caller's x-request-id when sane.
	var id string
	if v := info.Header[telemetry.RequestIDHeader]; len(v) > 0 {
		id = v[0]
	}
	c := &call{start: time.Now(), info: reqinfo.Info{ID: telemetry.RequestIDFrom(id), Route: method}}
	ctx = reqinfo.With(context.WithValue(ctx, callKey{}, c), &c.info)
	// A call that does not send its message within the read timeout is ended: by the sweep of
	// open calls (unary), or by its stream's timer (StreamInterceptor).
	ctx, c.cancel = context.WithCancel(ctx)
	if slots := g.slotsFor(method, r.Rule); slots != nil && !g.takeSlot(ctx, c, slots) {
		return nil, g.refuseOnHeaders(ctx, g.readsBusy())
	}
	// The budget of a unary call's message is admitted on the same ticket once gRPC holds the
	// message and its size is known (Receive).
	admitted, t, err := g.Gate.Admit(ctx, gate.Call{Route: r, Bearer: authz.Bearer(info.Header.Get("authorization")), Front: "grpc", Stream: r.Records, Local: true}, nil)
	if err != nil {
		c.giveSlot()
		if t.Client != "" {
			// An authenticated caller over its limits, or a stream finding no room, is not
			// abusing the connection: only refusals of its credentials count (conn.go).
			g.logCall(ctx, err, false, 0)
			return nil, err
		}
		return nil, g.refuseOnHeaders(ctx, err)
	}
	c.ticket, c.ctx = t, admitted
	if t.Holds() {
		// Given back by the interceptor once the call is answered; by the end of the call's
		// stream when no interceptor takes it (gRPC ended it, or the read pool refused it). Only
		// then: a goroutine per call ended early would cost a flood of reset calls dearly.
		c.stopRelease = context.AfterFunc(admitted, t.Release)
	}
	g.openMu.Lock()
	g.open[c] = struct{}{}
	g.openMu.Unlock()
	return admitted, nil
}

// refuseOnHeaders logs and counts a call the tap handle refuses, and counts it against its
// connection (conn.go).
func (g *Guard) refuseOnHeaders(ctx context.Context, err error) error {
	g.logCall(ctx, err, false, 0)
	g.watch.abused(ctx)
	return err
}

// readsBusy counts and answers a call without a token when every read slot is taken.
func (g *Guard) readsBusy() error {
	g.budget.Refuse("grpc", admission.CauseReadSlots)
	secs, ri := rpcerr.Retry(busyRetryAfter)
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, "Too many calls in progress.",
		fmt.Sprintf("Too many calls without a token are being read; retry after %d seconds.", secs), ri)
}

// slotsFor is the pool of read slots a method's calls take: none for methods that need a token
// (the tap handle has checked it before anything is read).
func (g *Guard) slotsFor(method string, rule routes.Rule) chan struct{} {
	if !rule.Public {
		return nil
	}
	if svcName, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/"); routes.IsPublicService(svcName) {
		return g.infra
	}
	return g.logins
}

// logCall logs and counts the direct call of ctx, ended with err after d: the one line every
// call on the gRPC port gets, written by the door's observe step (Observe), the stream
// interceptor, or the guard for a call no interceptor took (refused on its headers or by the read
// pool, or ended by gRPC). Its level is err's (telemetry.GRPCLevel) but for a call gRPC ended
// (ended), a warning whatever its code says (Unknown: gRPC does not tell; the caller sent too
// much or left); the sweep reads only what the call's goroutine no longer writes, should it have
// reached an interceptor as the call ended (the client from the verdict, no stream counts).
func (g *Guard) logCall(ctx context.Context, err error, ended bool, d time.Duration) {
	code, ri := status.Code(err), &callFrom(ctx).info
	l := telemetry.Line{Front: telemetry.FrontGRPC, Route: ri.Route, RequestID: ri.ID, Code: code.String(), Failed: err != nil, Took: d}
	if ended {
		l.ClientID, l.Level = authz.ClientID(ctx), slog.LevelWarn
	} else {
		l.ClientID, l.Level, l.Extra = ri.ClientID, telemetry.GRPCLevel(code), ri.Stream
	}
	g.Telemetry.Write(ctx, l)
}

// Observe is the gRPC door's first step: it tells the caller its request id (and the RateLimit
// headers of a client with a rate) in header metadata, gives back what the call's ticket holds
// once it is answered, and writes the call's line and metrics (the sweep of ended calls leaves
// it alone).
func (g *Guard) Observe(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	c := callFrom(ctx)
	_ = grpc.SetHeader(ctx, headerMD(c)) // the keys are lower case already
	g.markLogged(c)
	start, inFlight := time.Now(), g.Telemetry.InFlight(telemetry.FrontGRPC)
	inFlight.Inc()
	resp, err := next(ctx, req)
	c.releaseTicket()
	inFlight.Dec()
	g.logCall(ctx, err, false, time.Since(start))
	return resp, err
}

// headerMD is the header metadata of the call c: its request id, and the RateLimit headers its
// ticket carries.
func headerMD(c *call) metadata.MD {
	md := metadata.MD{telemetry.RequestIDHeader: {c.info.ID}}
	if t := c.ticket; t.Policy != "" {
		md[quota.PolicyMD] = []string{t.Policy}
		if t.State != "" {
			md[quota.StateMD] = []string{t.State}
		}
	}
	return md
}
