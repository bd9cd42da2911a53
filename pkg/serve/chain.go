package serve

// The chain every unary call runs once the gate has admitted it and it is decoded, whichever
// transport brought it, and the gRPC door's steps before it. The chain gets the call's ticket as a
// value: it decides nothing the gate decided and asks no step what another did.

import (
	"context"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// grpcDoor lists the steps between grpc-go and the chain: what only a message read off the wire
// needs (the JSON front does the same in its own way). docs/architecture.md describes each step;
// TestUnaryChain holds its list to this one.
func (s *Server) grpcDoor() []namedInterceptor {
	return []namedInterceptor{{"observe", s.guard.Observe}, {"message", s.guard.Receive}}
}

// unaryChain lists the chain's steps; a new one is an entry here and a name on
// docs/architecture.md's chain line (TestUnaryChain). It has no net for panics: the goroutine
// that runs it has its one (grpcguard's recoverCall for a gRPC call, telemetry.ObserveHTTP for a
// JSON request, a batch worker's own for a record), around the frame's code before the chain too.
func (s *Server) unaryChain() []namedInterceptor {
	return []namedInterceptor{
		// The call's phases as events on its span: decoded (whichever transport brought it), then
		// handled; the span's end is the answer sent.
		{"phases", phasesStep},
	}
}

// namedInterceptor is one step of the chain, named as docs/architecture.md names it.
type namedInterceptor struct {
	name string
	run  grpc.UnaryServerInterceptor
}

// admittedChain is the chain as internal/inproc runs it: a call without a ticket for the rpc called
// (a handler calling another rpc, a gateway handler paired with the wrong route) fails closed.
func admittedChain(steps []namedInterceptor) inproc.Chain {
	run := chain(steps)
	return func(ctx context.Context, t *gate.Ticket, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if t == nil || t.Method != info.FullMethod {
			return nil, rpcerr.NotAuthenticated("Authentication failed.", "The call was not admitted for this method.")
		}
		return run(ctx, req, info, h)
	}
}

// grpcUnary is the gRPC server's one unary interceptor: the gRPC door's steps, then the chain
// with the ticket the tap handle's gate admitted the call with.
func (s *Server) grpcUnary() grpc.UnaryServerInterceptor {
	toChain := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return s.unary(ctx, grpcguard.Ticket(ctx), req, info, next)
	}
	return chain(append(s.grpcDoor(), namedInterceptor{"chain", toChain}))
}

// chain composes the steps into one interceptor, the first outermost, each next a closure made per
// call as grpc-go's chaining does (a shared walker saved 2 of 74 allocations and no measurable CPU,
// BenchmarkFrontHandlerDifficulties40).
func chain(steps []namedInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		next := handler
		for i := len(steps) - 1; i >= 0; i-- {
			run, inner := steps[i].run, next
			next = func(ctx context.Context, req any) (any, error) { return run(ctx, req, info, inner) }
		}
		return next(ctx, req)
	}
}

func phasesStep(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	tracing.Event(ctx, "decoded")
	resp, err := next(ctx, req)
	tracing.Event(ctx, "handled")
	return resp, err
}
