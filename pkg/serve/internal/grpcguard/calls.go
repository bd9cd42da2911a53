package grpcguard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
)

// call is one direct gRPC call as the guard follows it, made in the tap handle and found in the
// call's context. The tap handle writes it before the call's goroutine starts; afterwards only
// that goroutine touches it, except slot, logged, and the sweep's reading of the id and route.
type call struct {
	info     reqinfo.Info    // the request's facts, in the call's context (reqinfo.From)
	logged   atomic.Bool     // an interceptor logged and counted the call
	ctx      context.Context // the tap handle's answer
	start    time.Time
	cancel   context.CancelFunc // ends the call (its message did not come in time)
	timedOut atomic.Bool        // the sweep ended it: its message had not come in time
	slot     func()             // gives back the read slot of a call without a token, once (takeSlot); nil: none
	read     *admission.Read    // what the call holds of the read pool (read.go); nil: none
	msg      wireMessage        // a unary call's message as read, until its message step decodes it
	ticket   *gate.Ticket       // what the gate admitted the call with (tapHandle)
	// stopRelease unregisters the ticket's release at the end of the call's stream; nil: the
	// ticket held nothing when admitted.
	stopRelease func() bool
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// Ticket is the ticket the gate admitted the direct call of ctx with, in the tap handle; nil for
// a context the tap handle did not make.
func Ticket(ctx context.Context) *gate.Ticket {
	if c := callFrom(ctx); c != nil {
		return c.ticket
	}
	return nil
}

func (c *call) releaseTicket() {
	c.ticket.Release()
	if c.stopRelease != nil {
		c.stopRelease()
	}
}

func (c *call) giveSlot() {
	if c.slot != nil {
		c.slot()
	}
}

// takeSlot gives the call c without a token one of slots, within its connection's share
// (grpc-go makes one peer per connection, the count's key), until its stream ends or it has read
// its message (c.slot). It reports false when none is free.
func (g *Guard) takeSlot(ctx context.Context, c *call, slots chan struct{}) bool {
	conn, _ := peer.FromContext(ctx) // grpc-go's server puts it in every call's context
	g.slotMu.Lock()
	defer g.slotMu.Unlock()
	if g.perConn[conn] >= MaxTokenlessPerConn {
		return false
	}
	select {
	case slots <- struct{}{}:
	default:
		return false
	}
	g.perConn[conn]++
	c.slot = sync.OnceFunc(func() {
		<-slots
		g.slotMu.Lock()
		defer g.slotMu.Unlock()
		if g.perConn[conn]--; g.perConn[conn] <= 0 {
			delete(g.perConn, conn)
		}
	})
	context.AfterFunc(ctx, c.slot)
	return true
}

// markLogged records that an interceptor logs and counts c: the sweep leaves it alone.
func (g *Guard) markLogged(c *call) {
	c.logged.Store(true)
	g.openMu.Lock()
	delete(g.open, c)
	g.openMu.Unlock()
}

// ended unlists and returns the open calls whose context has ended (gRPC ended them before any
// interceptor: a message over the server-wide limit, a caller gone), and ends those that have
// waited longer than readTimeout for their message (the next sweep finds them).
func (g *Guard) ended(readTimeout time.Duration) []*call {
	g.openMu.Lock()
	defer g.openMu.Unlock()
	var out []*call
	now := time.Now()
	for c := range g.open {
		switch {
		case c.ctx.Err() != nil:
			delete(g.open, c)
			out = append(out, c)
		case now.Sub(c.start) > readTimeout:
			c.timedOut.Store(true)
			c.cancel()
		}
	}
	return out
}

// EndedCallSweep is how often calls gRPC ended before any interceptor are looked for.
const EndedCallSweep = 500 * time.Millisecond

// LogEndedCalls logs and counts the calls gRPC ended before any interceptor ran. The frame runs it
// every EndedCallSweep while serving, and once more after the drain.
func (g *Guard) LogEndedCalls() {
	for _, c := range g.ended(g.ReadTimeout) {
		if !c.logged.Load() {
			g.logCall(c.ctx, endedEarly(c), true, time.Since(c.start))
		}
	}
}

// endedEarly is what is known of a call that ended before any interceptor ran. gRPC answers such
// a call itself and tells no one which answer it gave; only a passed deadline, the caller's or the
// read timeout's, is certain.
func endedEarly(c *call) error {
	if c.timedOut.Load() {
		return status.Error(codes.DeadlineExceeded, "the call's message did not come within the read timeout")
	}
	if d, ok := c.ctx.Deadline(); ok && !time.Now().Before(d) {
		return status.Error(codes.DeadlineExceeded, "the call's deadline passed before its message was read")
	}
	return status.Error(codes.Unknown, "the call ended before its handler ran: its message was over the server-wide limit, or the caller left or cut it off before sending it whole")
}
