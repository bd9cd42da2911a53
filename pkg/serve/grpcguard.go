package serve

// The gRPC door's guard against hostile and heavy traffic (issue 10). A gRPC server reads and
// decodes a call's whole message before any interceptor runs, so checks made there come too late
// for memory: 20 token-less 16 MiB calls once took the forecast service from 21 MiB to 861 MiB.
// Here:
//
//   - tokens are checked in the tap handle (grpc.InTapHandle), which runs on the call's headers
//     before its stream exists: a refused call costs no message read at all;
//   - the server-wide receive limit is the largest method limit of the service, checked by gRPC
//     on the message's length prefix before it reads the message, and each method's own limit
//     (its JSON body limit) right after the read, before decoding where the message type tells
//     the limit (codec.go), and in the interceptors from the size gRPC read;
//   - calls that need no token (IssueToken, health, reflection) may still send up to the
//     server-wide limit, so they are read only within a fixed number of slots across all
//     connections (at most maxTokenlessPerConn of them from one connection), taken in the tap
//     handle and given back when the call ends: refused immediately with ResourceExhausted and a
//     RetryInfo when none is free; calls with a token are admitted before the read instead
//     (grpcread.go);
//   - per connection, grpc-go holds the calls open (MaxConcurrentStreams), the header list and
//     the flow-control windows to fixed sizes; a call that has not sent its message within the
//     read timeout is ended; a connection that abuses the door is closed (grpcconn.go);
//   - a message that is not valid protobuf is answered InvalidArgument (gRPC itself answers
//     Internal), and every direct call, whatever stopped it, is logged and counted once.
//
// There is no stats handler: with one, gRPC builds eight event values and copies the call's
// metadata three times for every call, which cost about a tenth of a small call's CPU. What it
// told comes from elsewhere: the size read from the codec's note on the message, and the end of a
// call that never reached an interceptor from a sweep of the calls between the tap handle and an
// interceptor (openCalls; a context.AfterFunc per call cost a goroutine per call, ≈ 2 µs).

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// Calls without a token read at once, across all connections. Each may hold up to the
// server-wide receive limit while its message is read, so the worst case is (maxLoginReads +
// maxInfraReads) × that limit: 8 MiB on scoring, 23 MiB on forecast (README, "Limits and
// protection"). Two pools, so that a flood of logins cannot take the health checks of gRPC
// clients; the kubelet's probes have a listener of their own (probe.go).
const (
	maxLoginReads = 4 // IssueToken
	maxInfraReads = 4 // grpc.health.v1, reflection
	// busyRetryAfter is the wait a refused call is told: a login holds its slot for about
	// one secret check (0.1-0.7 s with the hashing queue).
	busyRetryAfter = time.Second
	// maxTokenlessPerConn is how many calls without a token one connection may have in the
	// slots at once: a single connection cannot take a whole pool.
	maxTokenlessPerConn = 2
	// maxHeaderListBytes bounds a call's headers (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE). The
	// largest legitimate set — a bearer token, a request id, traceparent and tracestate, gRPC's
	// own — is under 4 KiB; grpc-go's default is 16 MiB.
	maxHeaderListBytes = 16 << 10
	// streamWindowBytes is each stream's HTTP/2 flow-control window, fixed: a stream can hold at
	// most this much of its message before its handler starts reading it (grpc-go otherwise grows
	// windows up to 16 MiB to fill the link).
	streamWindowBytes = 64 << 10
	// connWindowBytes is each connection's window, fixed; grpc-go grants it back as data
	// arrives, so it paces the link rather than bounding memory.
	connWindowBytes = 1 << 20
)

// grpcGuard is what the tap handle, the codec and the interceptors share.
// Everything but the slots is written once in New, before the server serves, and only read
// afterwards.
type grpcGuard struct {
	ceiling int64         // server-wide receive limit: the largest message limit
	routes  *routes.Table // every method served, with its message limit (routes.go)
	logins  chan struct{} // slots of in-flight IssueToken calls
	infra   chan struct{} // slots of in-flight health and reflection calls
	codec   *guardCodec
	open    openCalls           // calls the tap handle let in that no interceptor has taken yet
	conns   connSlots           // calls without a token in the slots, per connection
	watch   *connWatch          // closes connections that abuse the door (grpcconn.go)
	reads   *admission.ReadPool // messages being read for calls with a token (grpcread.go)
	// readTimeout is how long a call that sends one message has to send it
	// (Config.GRPCReadTimeout; tests shorten it before serving).
	readTimeout time.Duration
}

// grpcGuardOptions makes the server's guard and the server options it needs. The receive limit
// must be known before the services are registered, so it is computed from a probe server the
// service registers on first (Service.Register only adds implementations).
func (s *Server) grpcGuardOptions(svc Service) ([]grpc.ServerOption, error) {
	probe := grpc.NewServer()
	defer probe.Stop()
	authv1.RegisterTokenServiceServer(probe, authv1.UnimplementedTokenServiceServer{})
	svc.Register(probe)
	g := &grpcGuard{
		logins:      make(chan struct{}, maxLoginReads),
		infra:       make(chan struct{}, maxInfraReads),
		readTimeout: s.cfg.GRPCReadTimeout,
		conns:       connSlots{held: map[*peer.Peer]int{}},
		watch:       newConnWatch(s.telemetry.Registry(), s.cfg.Service, s.log, s.telemetry.Limiter()),
	}
	probed, err := routes.Build(probe.GetServiceInfo(), s.cfg.Limits.routes())
	if err != nil {
		return nil, err
	}
	g.ceiling = probed.Ceiling
	g.codec = newGuardCodec(s.codec)
	s.guard = g
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(g.ceiling)),
		// Per connection: at most this many calls open, and as many handlers running (grpc-go
		// stops reading a connection whose handlers are all busy: the rapid-reset defence).
		grpc.MaxConcurrentStreams(uint32(s.cfg.GRPCMaxStreams)),
		grpc.MaxHeaderListSize(maxHeaderListBytes),
		grpc.StaticStreamWindowSize(streamWindowBytes),
		grpc.StaticConnWindowSize(connWindowBytes),
		grpc.InTapHandle(s.tapHandle),
		grpc.ForceServerCodecV2(g.codec),
	}, nil
}

// bind takes the server's route table, once every service is registered, and sets the codec's
// limits per request type. sizedFrom is the smallest message whose size the memory budget counts
// on a method.
func (g *grpcGuard) bind(t *routes.Table, sizedFrom func(method string) int64) error {
	if t.Ceiling != g.ceiling {
		return fmt.Errorf("the services registered %d-byte methods but the receive limit was set at %d: Service.Register must register the same services each time", t.Ceiling, g.ceiling)
	}
	g.routes = t
	types := map[protoreflect.FullName]typeLimits{}
	for full, r := range t.ByMethod {
		svcName, name, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
		in, ok := inputType(svcName, name)
		if !ok {
			continue
		}
		lim, from := r.MessageLimit, sizedFrom(full)
		tl, seen := types[in]
		if !seen {
			tl = typeLimits{largest: lim, smallest: lim, noteFrom: from}
		}
		tl = typeLimits{largest: max(tl.largest, lim), smallest: min(tl.smallest, lim), noteFrom: min(tl.noteFrom, from)}
		tl.noteFrom = min(tl.noteFrom, tl.smallest+1) // over the smallest limit: held to its method's
		types[in] = tl
	}
	g.codec.limits = types
	return nil
}

// inputType is the request message of a method, from the descriptors the generated code
// registered.
func inputType(svcName, method string) (protoreflect.FullName, bool) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
	if err != nil {
		return "", false
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return "", false
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return "", false
	}
	return md.Input().FullName(), true
}

// grpcCall is one direct gRPC call as the guard follows it: made in the tap handle, seen by the
// interceptors through the call's context (the context the tap handle returns is the one every
// later stage derives from). The tap handle writes it before the call's goroutine starts;
// afterwards only that goroutine touches it, except release, logged and the list links (under
// openCalls' lock).
type grpcCall struct {
	method        string
	route         *routes.Route // the method's route (routes.go)
	authorizedFor string        // the method the tap handle authorized; "" when it did not
	clientID      string        // the client the tap handle authenticated, when it did
	logged        atomic.Bool   // an interceptor logged and counted the call
	// While the call is in openCalls: its context (the tap handle's answer), headers and start.
	ctx        context.Context
	header     metadata.MD
	start      time.Time
	prev, next *grpcCall
	listed     bool
	slots      chan struct{}
	conn       *peer.Peer         // the connection whose slot count the call holds; nil: none
	cancel     context.CancelFunc // ends the call (its message did not come in time); nil: none
	timedOut   atomic.Bool        // the sweep ended it: its message had not come in time
	read       *admission.Read    // what the call holds of the read pool (grpcread.go); nil: none
	once       sync.Once
}

type grpcCallKey struct{}

func grpcCallFrom(ctx context.Context) *grpcCall {
	c, _ := ctx.Value(grpcCallKey{}).(*grpcCall)
	return c
}

// release gives the call's read slot back, once, whoever gets there first: the end of its reads,
// or its stream's context ending with the call.
func (c *grpcCall) release(g *grpcGuard) {
	c.once.Do(func() {
		if c.slots != nil {
			<-c.slots
		}
		if c.conn != nil {
			g.conns.give(c.conn)
		}
	})
}

// hold ties a read slot, and the connection's count of calls in the slots, to the call: given
// back when the call's stream ends, whatever ends it. It returns the context the call runs with.
func (c *grpcCall) hold(ctx context.Context, g *grpcGuard, slots chan struct{}, conn *peer.Peer) context.Context {
	c.slots, c.conn = slots, conn
	context.AfterFunc(ctx, func() { c.release(g) }) // the stream's context ends with the call, always
	return ctx
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
	if s.held[conn] >= maxTokenlessPerConn {
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

// slotsFor is the pool of read slots a method's calls take: none for methods that need a token
// (the tap handle has checked it before anything is read).
func (g *grpcGuard) slotsFor(method string, rule routes.Rule) chan struct{} {
	if !rule.Public {
		return nil
	}
	if svcName, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/"); routes.IsPublicService(svcName) {
		return g.infra
	}
	return g.logins
}

// tapHandle runs on each call's headers, in the connection's reader goroutine, before the call's
// stream exists and before a byte of its message is read. It must not block: a call over the
// in-flight cap is refused at once, not queued.
func (s *Server) tapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	g := s.guard
	method := info.FullMethodName
	r, served := s.routes.ByMethod[method]
	if !served {
		return ctx, nil // gRPC answers Unimplemented and reads nothing
	}
	c := &grpcCall{method: method, route: r, header: info.Header, start: time.Now()}
	ctx = context.WithValue(ctx, grpcCallKey{}, c)
	// A call that does not send its message within the read timeout is ended: by the sweep of
	// open calls (unary), or by its stream's timer (guardedStream).
	ctx, c.cancel = context.WithCancel(ctx)
	if slots := g.slotsFor(method, r.Rule); slots != nil {
		conn, _ := peer.FromContext(ctx)
		if conn != nil && !g.conns.take(conn) {
			return nil, s.refuseOnHeaders(ctx, info, readsBusy())
		}
		select {
		case slots <- struct{}{}:
			ctx = c.hold(ctx, g, slots, conn)
		default:
			if conn != nil {
				g.conns.give(conn)
			}
			return nil, s.refuseOnHeaders(ctx, info, readsBusy())
		}
	}
	authorized, err := s.authz.Authorize(ctx, r, authz.Bearer(info.Header.Get("authorization")))
	if err != nil {
		c.release(g)
		return nil, s.refuseOnHeaders(ctx, info, err)
	}
	c.authorizedFor, c.clientID = method, authz.ClientID(authorized) // claims on top: found at once
	c.ctx = authorized
	g.open.add(c)
	return authorized, nil
}

// refuseOnHeaders logs and counts a call the tap handle refuses, counts it against its
// connection (grpcconn.go), and returns err.
func (s *Server) refuseOnHeaders(ctx context.Context, info *tap.Info, err error) error {
	s.logGRPCCall(ctx, info.Header, info.FullMethodName, "", err, 0)
	s.guard.watch.abused(ctx)
	return err
}

// readsBusy is the answer to a call without a token when every read slot is taken.
func readsBusy() error {
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

// tapAuthorized reports whether the tap handle authorized the call c (nil: none) for method
// (same rule, same function: authz.Authorize); the claims it found are in the call's context already.
// It notes the client for the log.
func tapAuthorized(ctx context.Context, c *grpcCall, method string) bool {
	if c == nil || c.authorizedFor != method {
		return false
	}
	authz.NoteClient(ctx, c.clientID)
	return true
}

// markLogged records that an interceptor logs and counts the call c (nil: none): the sweep
// leaves it alone.
func (s *Server) markLogged(c *grpcCall) {
	if c != nil {
		c.logged.Store(true)
		s.guard.open.remove(c)
	}
}

// openCalls lists the direct calls between the tap handle and an interceptor, in a list linked
// through the calls themselves: adding and removing take one uncontended lock and no allocation.
// A call stays listed only if gRPC ends it before any interceptor runs (a message over the
// server-wide limit, a caller gone), until a sweep finds its context ended and logs it.
type openCalls struct {
	mu   sync.Mutex
	head *grpcCall
}

func (o *openCalls) add(c *grpcCall) {
	o.mu.Lock()
	c.prev, c.next, c.listed = nil, o.head, true
	if o.head != nil {
		o.head.prev = c
	}
	o.head = c
	o.mu.Unlock()
}

func (o *openCalls) remove(c *grpcCall) {
	o.mu.Lock()
	o.unlinkLocked(c)
	o.mu.Unlock()
}

func (o *openCalls) unlinkLocked(c *grpcCall) {
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
func (o *openCalls) ended(readTimeout time.Duration) []*grpcCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*grpcCall
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

// endedCallSweep is how often calls gRPC ended before any interceptor are looked for.
const endedCallSweep = 500 * time.Millisecond

// logEndedCalls logs and counts the calls gRPC ended before any interceptor ran (Serve runs it
// every endedCallSweep, and once more after the drain).
func (s *Server) logEndedCalls() {
	for _, c := range s.guard.open.ended(s.guard.readTimeout) {
		if !c.logged.Load() {
			s.logGRPCCallAt(c.ctx, slog.LevelWarn, c.header, c.method, authz.ClientID(c.ctx), endedEarly(c), time.Since(c.start))
		}
	}
}

// endedEarly is what is known of a call that ended before any interceptor ran. gRPC answers such
// a call itself and tells no one which answer it gave; only a passed deadline, the caller's or the
// read timeout's, is certain.
func endedEarly(c *grpcCall) error {
	if c.timedOut.Load() {
		return status.Error(codes.DeadlineExceeded, "the call's message did not come within the read timeout")
	}
	if d, ok := c.ctx.Deadline(); ok && !time.Now().Before(d) {
		return status.Error(codes.DeadlineExceeded, "the call's deadline passed before its message was read")
	}
	return status.Error(codes.Unknown, "the call ended before its handler ran: its message was over the server-wide limit, or the caller left or cut it off before sending it whole")
}

// checkReceived reports what is wrong with msg, the message just read: not valid protobuf, or
// over its method's limit (from the codec's note of its size). The interceptors call it before a
// handler sees the message. It returns the codec's note; without one, the message is smaller than
// anything the budget counts on its method (size 0 says so) and holds no unknown field. c is the
// call (nil: none).
func (s *Server) checkReceived(method string, msg any) (received, error) {
	r, ok := s.guard.codec.take(msg)
	if !ok {
		return received{}, nil
	}
	if r.refused != nil {
		return r, r.refused
	}
	if rt := s.routes.ByMethod[method]; rt != nil && r.size > rt.MessageLimit {
		r.free()
		return r, tooLarge(r.size, rt.MessageLimit)
	}
	return r, nil
}

// guardedStream checks each message a streaming call reads, as the unary interceptor checks a
// unary call's, and gives the read slot back once a call that reads one message has read it. Its
// timer ends a call whose message has not come within the read timeout, and a client-streaming
// call (reflection) that has sent nothing for that long.
type guardedStream struct {
	grpc.ServerStream
	s       *Server
	method  string
	streams bool // the client streams messages
	quiet   *time.Timer
}

func (g *guardedStream) RecvMsg(m any) error {
	err := g.ServerStream.RecvMsg(m)
	c := grpcCallFrom(g.Context())
	if g.quiet != nil && err == nil {
		if g.streams {
			g.quiet.Reset(g.s.guard.readTimeout)
		} else {
			g.quiet.Stop()
		}
	}
	if err == nil {
		var r received
		if r, err = g.s.checkReceived(g.method, m); err == nil {
			// Streams are the calls without a token, read within their slots: nothing to admit.
			if g.s.guard.codec.decodeRaw(&r, m); r.refused != nil {
				err = r.refused
			}
		}
	}
	if c != nil && !g.streams {
		c.release(g.s.guard) // one message, and gRPC has checked that no second one follows
	}
	return err
}

// guardStream wraps a streaming call; stop ends its timer when the call ends.
func (s *Server) guardStream(ss grpc.ServerStream, info *grpc.StreamServerInfo) (_ grpc.ServerStream, stop func()) {
	g := &guardedStream{ServerStream: ss, s: s, method: info.FullMethod, streams: info.IsClientStream}
	if c := grpcCallFrom(ss.Context()); c != nil && c.cancel != nil {
		g.quiet = time.AfterFunc(s.guard.readTimeout-time.Since(c.start), func() {
			c.timedOut.Store(true)
			c.cancel()
		})
		return g, func() { g.quiet.Stop() }
	}
	return g, func() {}
}

// logGRPCCall logs and counts a direct call that the unary interceptor did not: refused by the
// tap handle, stopped by gRPC before any interceptor ran (a message over the server-wide limit),
// or streaming. The fields are the unary interceptor's.
func (s *Server) logGRPCCall(ctx context.Context, md metadata.MD, method, clientID string, err error, d time.Duration) {
	s.logGRPCCallAt(ctx, telemetry.GRPCLevel(status.Code(err)), md, method, clientID, err, d)
}

// logGRPCCallAt is logGRPCCall at level: a call gRPC ended before any interceptor is a warning
// whatever its code says (Unknown: gRPC does not tell; the caller sent too much or left).
func (s *Server) logGRPCCallAt(ctx context.Context, level slog.Level, md metadata.MD, method, clientID string, err error, d time.Duration) {
	id := ""
	if v := md.Get(telemetry.RequestIDHeader); len(v) > 0 {
		id = v[0]
	}
	code := status.Code(err)
	s.telemetry.Write(ctx, telemetry.Line{Front: "grpc", Route: method, RequestID: telemetry.RequestIDFrom(id), ClientID: clientID,
		Code: code.String(), Failed: err != nil, Level: level, Took: d})
}
