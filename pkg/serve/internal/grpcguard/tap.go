package grpcguard

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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
	if slots := g.slotsFor(method, r.Rule); slots != nil {
		conn, _ := peer.FromContext(ctx) // grpc-go's server puts it in every call's context
		if !g.conns.take(conn) {
			return nil, g.refuseOnHeaders(ctx, g.readsBusy())
		}
		select {
		case slots <- struct{}{}:
			// The slot, and the connection's count, are the call's until its stream ends,
			// whatever ends it, or it has read its message (release).
			c.slots, c.conn = slots, conn
			context.AfterFunc(ctx, func() { c.release(g) })
		default:
			g.conns.give(conn)
			return nil, g.refuseOnHeaders(ctx, g.readsBusy())
		}
	}
	// The gate, on the call's headers: the token, the method's rule, the client's limits (and a
	// batch stream's reserve of the budget); the budget of a unary call's message is admitted on
	// the same ticket once gRPC holds the message and its size is known (Guard.Receive).
	admitted, t, err := g.Gate.Admit(ctx, gate.Call{Route: r, Bearer: authz.Bearer(info.Header.Get("authorization")), Front: "grpc", Stream: r.Records, Local: true}, nil)
	if err != nil {
		c.release(g)
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
	g.open.add(c)
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

// tooLarge is the answer to a message over its method's limit.
func tooLarge(size, limit int64) error {
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionTooLarge, "Request too large.",
		fmt.Sprintf("The message is %d bytes; this method takes at most %d bytes.", size, limit))
}

// markLogged records that an interceptor logs and counts the call c: the sweep leaves it alone.
func (g *Guard) markLogged(c *call) {
	c.logged.Store(true)
	g.open.remove(c)
}

// call is one direct gRPC call as the guard follows it: made in the tap handle, seen by the
// interceptors through the call's context (the context the tap handle returns is the one every
// later stage derives from). The tap handle writes it before the call's goroutine starts;
// afterwards only that goroutine touches it, except release, logged, and the sweep's reading of
// the id and route.
type call struct {
	info   reqinfo.Info // the request's facts, in the call's context (reqinfo.From)
	logged atomic.Bool  // an interceptor logged and counted the call
	// While the call is in openCalls: its context (the tap handle's answer) and start.
	ctx      context.Context
	start    time.Time
	slots    chan struct{}
	conn     *peer.Peer         // the connection whose slot count the call holds, with slots
	cancel   context.CancelFunc // ends the call (its message did not come in time); nil: none
	timedOut atomic.Bool        // the sweep ended it: its message had not come in time
	read     *admission.Read    // what the call holds of the read pool (read.go); nil: none
	msg      wireMessage        // a unary call's message as read, until its message step decodes it
	once     sync.Once
	ticket   *gate.Ticket // what the gate admitted the call with (tapHandle)
	// stopRelease unregisters the ticket's release at the end of the call's stream, once an
	// interceptor has released it; nil: the ticket held nothing when the call was admitted.
	stopRelease func() bool
}

// Ticket is the ticket the gate admitted the direct call of ctx with, in the tap handle; nil for
// a context the tap handle did not make.
func Ticket(ctx context.Context) *gate.Ticket {
	if c := callFrom(ctx); c != nil {
		return c.ticket
	}
	return nil
}

// releaseTicket gives back what the call's ticket holds, now that the call is answered.
func (c *call) releaseTicket() {
	c.ticket.Release()
	if c.stopRelease != nil {
		c.stopRelease()
	}
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// release gives the call's read slot back, once, whoever gets there first: the end of its reads,
// or its stream's context ending with the call.
func (c *call) release(g *Guard) {
	c.once.Do(func() {
		if c.slots != nil {
			<-c.slots
			g.conns.give(c.conn)
		}
	})
}

// connSlots counts, per connection, the calls without a token that hold a read slot. The key is
// the connection's peer, which grpc-go makes once per connection.
type connSlots struct {
	mu   sync.Mutex
	held map[*peer.Peer]int
}

// take counts one more call on conn, or reports that conn holds its share already.
func (s *connSlots) take(conn *peer.Peer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[conn] >= MaxTokenlessPerConn {
		return false
	}
	s.held[conn]++
	return true
}

func (s *connSlots) give(conn *peer.Peer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[conn]--; s.held[conn] <= 0 {
		delete(s.held, conn)
	}
}

// openCalls are the direct calls between the tap handle and an interceptor. A call stays in it
// only if gRPC ends it before any interceptor runs (a message over the server-wide limit, a caller
// gone), until a sweep finds its context ended and logs it.
type openCalls struct {
	mu    sync.Mutex
	calls map[*call]struct{}
}

func (o *openCalls) add(c *call) {
	o.mu.Lock()
	o.calls[c] = struct{}{}
	o.mu.Unlock()
}

func (o *openCalls) remove(c *call) {
	o.mu.Lock()
	delete(o.calls, c)
	o.mu.Unlock()
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

// ended unlists and returns the calls whose context has ended, and ends the calls that have waited
// longer than readTimeout for their message (the next sweep finds them ended).
func (o *openCalls) ended(readTimeout time.Duration) []*call {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*call
	now := time.Now()
	for c := range o.calls {
		switch {
		case c.ctx.Err() != nil:
			delete(o.calls, c)
			out = append(out, c)
		case c.cancel != nil && now.Sub(c.start) > readTimeout:
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
	for _, c := range g.open.ended(g.ReadTimeout) {
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
