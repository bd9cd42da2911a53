package grpcguard

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// tapHandle runs on each call's headers, in the connection's reader goroutine, before the call's
// stream exists and before a byte of its message is read. It must not block: a call over the
// in-flight cap is refused at once, not queued.
func (g *Guard) tapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	method := info.FullMethodName
	r, served := g.routes.ByMethod[method]
	if !served {
		return ctx, nil // gRPC answers Unimplemented and reads nothing
	}
	c := &call{method: method, route: r, header: info.Header, start: time.Now()}
	ctx = context.WithValue(ctx, callKey{}, c)
	// A call that does not send its message within the read timeout is ended: by the sweep of
	// open calls (unary), or by its stream's timer (guardedStream).
	ctx, c.cancel = context.WithCancel(ctx)
	if slots := g.slotsFor(method, r.Rule); slots != nil {
		conn, _ := peer.FromContext(ctx)
		if conn != nil && !g.conns.take(conn) {
			return nil, g.refuseOnHeaders(ctx, info, g.readsBusy())
		}
		select {
		case slots <- struct{}{}:
			c.hold(ctx, g, slots, conn)
		default:
			if conn != nil {
				g.conns.give(conn)
			}
			return nil, g.refuseOnHeaders(ctx, info, g.readsBusy())
		}
	}
	authorized, err := g.authz.Authorize(ctx, r, authz.Bearer(info.Header.Get("authorization")))
	if err != nil {
		c.release(g)
		return nil, g.refuseOnHeaders(ctx, info, err)
	}
	c.clientID = authz.ClientID(authorized) // claims on top: found at once
	c.ctx = authorized
	g.open.add(c)
	return authorized, nil
}

// refuseOnHeaders logs and counts a call the tap handle refuses, counts it against its
// connection (conn.go), and returns err.
func (g *Guard) refuseOnHeaders(ctx context.Context, info *tap.Info, err error) error {
	g.logCall(ctx, telemetry.GRPCLevel(status.Code(err)), info.Header, info.FullMethodName, "", err, 0)
	g.watch.abused(ctx)
	return err
}

// readsBusy is the answer to a call without a token when every read slot is taken; it counts the
// refusal.
func (g *Guard) readsBusy() error {
	if g.budget != nil {
		g.budget.Refuse("grpc", admission.CauseReadSlots)
	}
	secs := int64(busyRetryAfter / time.Second)
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, "Too many calls in progress.",
		fmt.Sprintf("Too many calls without a token are being read; retry after %d seconds.", secs),
		&errdetails.RetryInfo{RetryDelay: durationpb.New(busyRetryAfter)})
}

// tooLarge is the answer to a message over its method's limit.
func tooLarge(size, limit int64) error {
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionTooLarge, "Request too large.",
		fmt.Sprintf("The message is %d bytes; this method takes at most %d bytes.", size, limit))
}

// markLogged records that an interceptor logs and counts the call c (nil: none): the sweep
// leaves it alone.
func (g *Guard) markLogged(c *call) {
	if c != nil {
		c.logged.Store(true)
		g.open.remove(c)
	}
}
