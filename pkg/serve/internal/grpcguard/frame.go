package grpcguard

import (
	"context"
	"net"

	"google.golang.org/grpc/metadata"
)

// What the frame and its chain ask of the guard.

// Header is the first value of key among a direct call's headers: the copy the tap handle saw
// when it let the call in (no metadata copy), else the call's metadata; "" when there is none.
func Header(ctx context.Context, key string) string {
	var values []string
	if c := callFrom(ctx); c != nil {
		values = c.header[key]
	} else {
		values = metadata.ValueFromIncomingContext(ctx, key)
	}
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

// Logged records that the chain logs and counts the direct call of ctx: the sweep of ended calls
// leaves it alone.
func (g *Guard) Logged(ctx context.Context) { g.markLogged(callFrom(ctx)) }

// Listen has the guard watch the connections lis accepts, to close one that abuses the server
// (conn.go).
func (g *Guard) Listen(lis net.Listener) net.Listener { return g.watch.listen(lis) }

// LogEndedCalls logs and counts the calls gRPC ended before any interceptor ran. The frame runs it
// every EndedCallSweep while serving, and once more after the drain.
func (g *Guard) LogEndedCalls() { g.logEndedCalls() }

// ReadPoolSize is the read pool's size in bytes (for the start-up log line).
func (g *Guard) ReadPoolSize() int64 { return g.reads.Size() }
