package grpcguard

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// openCalls lists the direct calls between the tap handle and an interceptor, in a list linked
// through the calls themselves: adding and removing take one uncontended lock and no allocation.
// A call stays listed only if gRPC ends it before any interceptor runs (a message over the
// server-wide limit, a caller gone), until a sweep finds its context ended and logs it.
type openCalls struct {
	mu   sync.Mutex
	head *call
}

func (o *openCalls) add(c *call) {
	o.mu.Lock()
	c.prev, c.next, c.listed = nil, o.head, true
	if o.head != nil {
		o.head.prev = c
	}
	o.head = c
	o.mu.Unlock()
}

func (o *openCalls) remove(c *call) {
	o.mu.Lock()
	o.unlinkLocked(c)
	o.mu.Unlock()
}

func (o *openCalls) unlinkLocked(c *call) {
	if !c.listed {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		o.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
}

// ended unlists and returns the calls whose context has ended, and ends the calls that have waited
// longer than readTimeout for their message (the next sweep finds them ended).
func (o *openCalls) ended(readTimeout time.Duration) []*call {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*call
	now := time.Now()
	for c := o.head; c != nil; {
		next := c.next
		switch {
		case c.ctx.Err() != nil:
			o.unlinkLocked(c)
			out = append(out, c)
		case c.cancel != nil && now.Sub(c.start) > readTimeout:
			c.timedOut.Store(true)
			c.cancel()
		}
		c = next
	}
	return out
}

// EndedCallSweep is how often calls gRPC ended before any interceptor are looked for.
const EndedCallSweep = 500 * time.Millisecond

// logEndedCalls logs and counts the calls gRPC ended before any interceptor ran (Serve runs it
// every EndedCallSweep, and once more after the drain).
func (g *Guard) logEndedCalls() {
	for _, c := range g.open.ended(g.readTimeout) {
		if !c.logged.Load() {
			g.logCallAt(c.ctx, slog.LevelWarn, c.header, c.method, authz.ClientID(c.ctx), endedEarly(c), time.Since(c.start))
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

// logCall logs and counts a direct call that the unary interceptor did not: refused by the
// tap handle, stopped by gRPC before any interceptor ran (a message over the server-wide limit),
// or streaming. The fields are the unary interceptor's.
func (g *Guard) logCall(ctx context.Context, md metadata.MD, method, clientID string, err error, d time.Duration) {
	g.logCallAt(ctx, telemetry.GRPCLevel(status.Code(err)), md, method, clientID, err, d)
}

// logCallAt is logCall at level: a call gRPC ended before any interceptor is a warning
// whatever its code says (Unknown: gRPC does not tell; the caller sent too much or left).
func (g *Guard) logCallAt(ctx context.Context, level slog.Level, md metadata.MD, method, clientID string, err error, d time.Duration) {
	id := ""
	if v := md.Get(telemetry.RequestIDHeader); len(v) > 0 {
		id = v[0]
	}
	code := status.Code(err)
	g.telemetry.Write(ctx, telemetry.Line{Front: "grpc", Route: method, RequestID: telemetry.RequestIDFrom(id), ClientID: clientID,
		Code: code.String(), Failed: err != nil, Level: level, Took: d})
}
