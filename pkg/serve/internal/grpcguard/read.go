package grpcguard

// Admission before the read. grpc-go has no per-method receive limit: a call to a 1 MiB method
// may send up to the service's largest limit, and forty 16 MiB messages once took the forecast
// service to 3.46 GB. So a call with a token takes the server-wide limit from the read pool
// before its handler lets gRPC read past the stream's window, and gives it back once its message
// is decoded (message.go). The pool is a quarter of the budget beside it, so reads and the work
// they bring stay within the memory the budget was sized for; a read finding it full waits a
// little, then is answered ResourceExhausted with RetryInfo, as an over-budget JSON request 503.
// Calls without a token are read within their slots instead (tap.go), so that they cannot fill
// the pool that calls with a token need.

import (
	"context"
	"runtime/debug"
	"slices"
	"time"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Registrar is srv with the read admission in front of each unary handler registered on it:
// every unary service the server serves is registered through it.
func (g *Guard) Registrar(srv grpc.ServiceRegistrar) grpc.ServiceRegistrar {
	return guardedRegistrar{g: g, srv: srv}
}

type guardedRegistrar struct {
	g   *Guard
	srv grpc.ServiceRegistrar
}

func (r guardedRegistrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i := range d.Methods {
		d.Methods[i].Handler = r.g.admitRead(d.Methods[i].Handler)
	}
	r.srv.RegisterService(&d, impl)
}

// admitRead wraps a generated unary handler, which reads the message (dec) before it calls the
// interceptors: the read is admitted first, and the message read as bytes into c.msg for Receive
// to decode into the handler's request. Bytes no step took are given back here.
func (g *Guard) admitRead(h grpc.MethodHandler) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (_ any, err error) {
		c := callFrom(ctx)
		defer g.recoverCall(ctx, c, &err)
		defer c.msg.free()
		if c.slot != nil {
			return h(srv, ctx, func(any) error { return dec(&c.msg) }, ic) // read within a slot
		}
		// A rate shared through Redis, which the tap handle left to this goroutine: before the read.
		if err := c.ticket.AdmitRate(); err != nil {
			return nil, g.refuseCall(ctx, c, err)
		}
		client := c.ticket.Client // the tap handle authorized the call
		r, ok := g.reads.Take(ctx, client, g.Gate.Limits.Concurrency(client), g.routes.Ceiling)
		if !ok {
			g.Gate.Budget.Refuse("grpc", admission.CauseReadPool)
			return nil, g.refuseCall(ctx, c, rpcerr.Overloaded(admission.RetryAfter))
		}
		c.read = r
		defer r.Done() // the message step gives it back sooner, once the message is decoded
		g.step(ctx, "read")
		return h(srv, ctx, func(any) error {
			err := dec(&c.msg)
			if err != nil && ctx.Err() != nil {
				g.watch.abused(ctx) // reset before its message came (conn.go)
			}
			return err
		}, ic)
	}
}

// recoverCall is the one net of a unary call's goroutine, around all the frame runs there (the
// read's admission, the door, the chain, the handler): grpc-go recovers nothing, and a panic would
// end the process. The caller gets Internal, the documented problem with nothing of the panic;
// the log gets the panic with its stack, once, and the call's line: Observe's, or this net's when
// the panic came before Observe.
func (g *Guard) recoverCall(ctx context.Context, c *call, err *error) {
	p := recover()
	if p == nil {
		return
	}
	g.Log.ErrorContext(ctx, "panic in handler", "request_id", c.info.ID, "route", c.info.Route, "panic", p, "stack", string(debug.Stack()))
	*err = rpcerr.Internal()
	if !c.logged.Load() {
		_ = g.refuseCall(ctx, c, *err)
	}
}

// refuseCall logs and counts a call ended before any interceptor, and releases its ticket now
// rather than at the end of its stream.
func (g *Guard) refuseCall(ctx context.Context, c *call, err error) error {
	g.markLogged(c)
	c.releaseTicket()
	g.logCall(ctx, err, false, time.Since(c.start))
	return err
}

// step runs the tests' seam, if set, in the step of a unary call named (read, observe, message).
func (g *Guard) step(ctx context.Context, name string) {
	if g.stepHook != nil {
		g.stepHook(ctx, name)
	}
}
