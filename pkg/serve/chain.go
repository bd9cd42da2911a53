package serve

// The interceptor chain of every unary call, one concern each, outermost first, and the two doors
// a call comes in by. A call on the gRPC port passes the gRPC door's steps (grpcDoor: what only
// a call read off the wire needs) and then the chain; every other call (the JSON front through
// grpc-gateway, an NDJSON or gRPC batch record) comes in through the in-process channel
// (internal/inproc), which runs the chain alone: the JSON front did the door's work in HTTP's
// terms before the gateway decoded the body (telemetry.ObserveHTTP, httpfront), and a record's
// stream did it once for all its records. No step asks which door a call came by: what a door
// decided (the verdict on the token, the client's limits applied: quota.Decided) is in the
// call's context, and so is a stream's pacer, which tells the limit step that a record is paced
// by its stream, never refused. A new step (a tracing span, say) is one more entry in
// unaryChain, and one more name on docs/architecture.md's chain line.

import (
	"context"
	"runtime/debug"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// grpcDoor lists the steps of a call on the gRPC port before the chain. TestUnaryChain keeps
// docs/architecture.md's list of it true.
func (s *Server) grpcDoor() []namedInterceptor {
	return []namedInterceptor{
		// The caller told its request id (the tap handle made it: the caller's x-request-id when
		// sane) in a header; one log line and the metrics of the call. The JSON front writes its
		// own (telemetry.ObserveHTTP), with the HTTP status.
		{"observe", s.guard.Observe},
		// A panic in the door's later steps becomes Internal, inside the log line's step.
		{"recover", s.recoverStep},
		// The client's limits, decided before the message is admitted and decoded (a refused
		// call costs no budget and no decode), as the JSON front decides before it reads the body.
		// The tap handle authorized the call: its client is known (none for a public method).
		{"limit", s.limits.Step},
		// The message: its size against the method's limit, the budget's admission of its
		// decoding, the decoding itself, and no unknown fields. The JSON front did all of this
		// before and while it read the body.
		{"message", s.guard.Receive},
	}
}

// unaryChain lists the chain every unary call runs, whichever door it came by. TestUnaryChain
// keeps docs/architecture.md's list of it true.
func (s *Server) unaryChain() []namedInterceptor {
	return []namedInterceptor{
		// A panic becomes Internal, logged with its stack: the caller gets the documented error.
		{"recover", s.recoverStep},
		// The token: the verdict the door reached on the call's headers, before its body or
		// message was read (authz.Granted), or else authorize now.
		{"authenticate", s.authenticateStep},
		// The client's limits (internal/quota): its rate, then its calls in progress; a refusal
		// is 429 / RESOURCE_EXHAUSTED before the handler runs, the RateLimit headers go out as
		// header metadata. A call a door decided, or a stream's record, passes (above).
		{"limit", s.limits.Step},
		// The call's phases as events on its server span, when tracing is on: the message read,
		// admitted and decoded (either door did so by now), then the handler's answer; the
		// span's end is the answer encoded and sent.
		{"phases", phasesStep},
	}
}

// namedInterceptor is one step of the chain.
type namedInterceptor struct {
	name string
	run  grpc.UnaryServerInterceptor
}

// chain composes the steps into one interceptor, the first outermost: each step's next is a
// closure of the steps after it, made per call (grpc-go's own chaining does the same). A walker
// shared by the steps saved two of a call's 74 allocations in-process and no CPU measurable
// (BenchmarkFrontHandlerDifficulties40, interleaved), and held every step to calling next at most
// once and never after returning.
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

func (s *Server) recoverStep(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "panic in handler", "request_id", reqinfo.ID(ctx), "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			resp, err = nil, rpcerr.Internal()
		}
	}()
	return next(ctx, req)
}

func (s *Server) authenticateStep(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if !authz.Granted(ctx, info.FullMethod) { // else a door authorized this very call: its claims are in ctx
		var err error
		if ctx, err = s.authz.Authorize(ctx, s.routes.ByMethod[info.FullMethod], authz.BearerFromMetadata(ctx)); err != nil {
			return nil, err
		}
	}
	return next(ctx, req)
}

func phasesStep(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	tracing.Event(ctx, "decoded")
	resp, err := next(ctx, req)
	tracing.Event(ctx, "handled")
	return resp, err
}
