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
// stream exists: the call's one admission by the gate. It must not block, for no other stream of
// the connection is read meanwhile: a call over the in-flight cap is refused, not queued; the gate
// decides without the network (gate.Call.Local), a rate shared through Redis is decided later in
// the call's goroutine (admitRead), and the message's budget, which may wait, in Receive.
func (g *Guard) tapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	method := info.FullMethodName
	r, served := g.routes.ByMethod[method]
	if !served {
		return ctx, nil // gRPC answers Unimplemented and reads nothing
	}
	var id string
	if v := info.Header[telemetry.RequestIDHeader]; len(v) > 0 {
		id = v[0]
	}
	c := &call{start: time.Now(), info: reqinfo.Info{ID: telemetry.RequestIDFrom(id), Route: method}}
	ctx = reqinfo.With(context.WithValue(ctx, callKey{}, c), &c.info)
	// Ended if its message is late: by the sweep (unary), or by its stream's timer.
	ctx, c.cancel = context.WithCancel(ctx)
	if slots := g.slotsFor(method, r.Rule); slots != nil && !g.takeSlot(ctx, c, slots) {
		return nil, g.refuseOnHeaders(ctx, g.readsBusy())
	}
	admitted, t, err := g.Gate.Admit(ctx, gate.Call{Route: r, Bearer: authz.Bearer(info.Header.Get("authorization")), Front: "grpc", Stream: r.Records, Local: true}, nil)
	if err != nil {
		c.giveSlot()
		if t.Client != "" {
			// Over its limits, or no room for a stream, is not abuse: only credentials' refusals count.
			g.logCall(ctx, err, false, 0)
			return nil, err
		}
		return nil, g.refuseOnHeaders(ctx, err)
	}
	c.ticket, c.ctx = t, admitted
	if t.Holds() {
		// Released by the interceptor once the call is answered, or by the end of the call's
		// stream when no interceptor takes it. Not sooner: a goroutine per call ended early would
		// cost a flood of reset calls dearly.
		c.stopRelease = context.AfterFunc(admitted, t.Release)
	}
	g.openMu.Lock()
	g.open[c] = struct{}{}
	g.openMu.Unlock()
	return admitted, nil
}

// refuseOnHeaders logs and counts a call the tap handle refuses, also against its connection.
func (g *Guard) refuseOnHeaders(ctx context.Context, err error) error {
	g.logCall(ctx, err, false, 0)
	g.watch.abused(ctx)
	return err
}

// readsBusy counts and answers a call without a token when every read slot is taken.
func (g *Guard) readsBusy() error {
	g.Gate.Budget.Refuse("grpc", admission.CauseReadSlots)
	secs, ri := rpcerr.Retry(busyRetryAfter)
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, "Too many calls in progress.",
		fmt.Sprintf("Too many calls without a token are being read; retry after %d seconds.", secs), ri)
}

// slotsFor is the pool of read slots a method's calls take: none for methods that need a token.
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
// call on the gRPC port gets. A call gRPC ended (ended) is a warning whatever its code (gRPC does
// not tell; the caller sent too much or left), and the sweep reads only what the call's goroutine
// no longer writes, should it have reached an interceptor meanwhile (no stream counts).
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

// Observe is the gRPC door's first step: it tells the caller its request id and RateLimit headers
// in header metadata, releases the call's ticket once it is answered, and writes its line. A
// panic past it is on its way to the call's net (admitRead, read.go): the line says Internal, the
// answer the net gives.
func (g *Guard) Observe(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	c := callFrom(ctx)
	g.markLogged(c)
	start, inFlight := time.Now(), g.Telemetry.InFlight(telemetry.FrontGRPC)
	inFlight.Inc()
	answered := false
	defer func() {
		if !answered {
			err = rpcerr.Internal()
		}
		c.releaseTicket()
		inFlight.Dec()
		g.logCall(ctx, err, false, time.Since(start))
	}()
	_ = grpc.SetHeader(ctx, headerMD(c)) // the keys are lower case already
	g.step(ctx, "observe")
	resp, err = next(ctx, req)
	answered = true
	return resp, err
}

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
