// Package grpcguard is the gRPC side's guard against hostile and heavy traffic. A gRPC server
// reads and decodes a call's whole message before any interceptor runs, too late for memory (20
// token-less 16 MiB calls once took the forecast service from 21 MiB to 861 MiB). So New bounds
// each connection; the tap handle has the gate admit a call on its headers and reads calls
// without a token within a few slots (tap.go); the read pool admits the others before gRPC reads
// their message (read.go), read as bytes (codec.go) and decoded once within its method's limit
// and admitted by the budget (message.go), per message on streams (stream.go); an abusive
// connection is closed (conn.go); the kubelet's probes have a port of their own (probe.go). The
// guard writes every direct call's log line (logCall), since it sees calls no interceptor does.
//
// There is no stats handler: it builds eight event values and copies the metadata three times per
// call, about a tenth of a small call's CPU. The message's size comes from message.go, and the
// end of a call no interceptor reached from a sweep (calls.go; a context.AfterFunc per call cost
// a goroutine per call, ≈ 2 µs).
package grpcguard

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// Calls without a token read at once, across all connections, each holding up to the
// server-wide receive limit: at worst (MaxLoginReads + MaxInfraReads) × that limit, 8 MiB on
// scoring, 23 MiB on forecast. Two pools, so that a flood of logins cannot take gRPC clients'
// health checks (the kubelet's have a listener of their own, probe.go).
const (
	MaxLoginReads = 4 // logins (the token service)
	MaxInfraReads = 4 // grpc.health.v1, reflection
	// busyRetryAfter is told to a refused call: a login holds its slot for about one secret
	// check (0.1-0.7 s with the hashing queue).
	busyRetryAfter = time.Second
	// MaxTokenlessPerConn is the slots one connection may hold at once: not a whole pool.
	MaxTokenlessPerConn = 2
	// maxHeaderListBytes bounds a call's headers: the largest legitimate set (a bearer token, a
	// request id, trace context, gRPC's own) is under 4 KiB; grpc-go's default is 16 MiB.
	maxHeaderListBytes = 16 << 10
	// streamWindowBytes, fixed, is the most a stream holds before its handler reads it (grpc-go
	// otherwise grows windows up to 16 MiB).
	streamWindowBytes = 64 << 10
	// connWindowBytes, fixed, paces the link rather than bounding memory (granted back as data
	// arrives).
	connWindowBytes = 1 << 20
)

// Guard is what the tap handle, the read admission and the gRPC door's steps share. Everything
// but the slots is written in New, before the server serves, and only read afterwards.
type Guard struct {
	Options                     // ReadTimeout may be shortened by tests before serving
	routes  *routes.Table       // every method served, with its message limit; its Ceiling the server-wide receive limit
	logins  chan struct{}       // slots of in-flight logins
	infra   chan struct{}       // slots of in-flight health and reflection calls
	watch   *connWatch          // closes connections that abuse the server (conn.go)
	reads   *admission.ReadPool // messages being read for calls with a token (read.go)
	openMu  sync.Mutex
	open    map[*call]struct{} // calls the tap handle let in that no interceptor has taken yet
	slotMu  sync.Mutex
	perConn map[*peer.Peer]int // calls without a token in the slots, per connection

	// stepHook is the tests' seam in each step of a unary call (export_test.go); nil when serving.
	stepHook func(ctx context.Context, step string)
}

// Options are what the guard needs of the frame.
type Options struct {
	Service     string
	MaxStreams  int           // calls one connection may have open (Config.GRPCMaxStreams)
	ReadTimeout time.Duration // time a call has to send its message (Config.GRPCReadTimeout)
	StreamIdle  time.Duration // time a batch stream may go without a message (Config.BatchIdle)
	Gate        *gate.Gate    // admits each call on its headers; its Limits bound a client's read pool share, its Authz watches a stream's rights
	Telemetry   *telemetry.Recorder
	Log         *slog.Logger
}

// New makes the guard of the route table t, once every service is registered, and the server
// options it needs; the gate's budget, of budgetBytes, reports the guard's read pool in its series.
func New(o Options, t *routes.Table, budgetBytes int64) (*Guard, []grpc.ServerOption) {
	g := &Guard{
		Options: o,
		routes:  t,
		reads:   o.Gate.Budget.Report("grpc", admission.NewReadPool(budgetBytes, t.Ceiling)),
		logins:  make(chan struct{}, MaxLoginReads),
		infra:   make(chan struct{}, MaxInfraReads),
		open:    map[*call]struct{}{},
		perConn: map[*peer.Peer]int{},
		watch:   newConnWatch(o.Telemetry.Registry(), o.Service, o.Log, o.Telemetry.Limiter()),
	}
	return g, []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(t.Ceiling)),
		// Also the handlers running: grpc-go stops reading a connection whose handlers are all busy.
		grpc.MaxConcurrentStreams(uint32(o.MaxStreams)),
		grpc.MaxHeaderListSize(maxHeaderListBytes),
		grpc.StaticStreamWindowSize(streamWindowBytes),
		grpc.StaticConnWindowSize(connWindowBytes),
		grpc.InTapHandle(g.tapHandle),
		grpc.ForceServerCodecV2(newCodec()),
	}
}

// Listen has the guard watch the connections lis accepts, to close one that abuses the server.
func (g *Guard) Listen(lis net.Listener) net.Listener {
	return watchListener{Listener: lis, w: g.watch}
}

// ReadPool is the read pool, whose size the frame logs.
func (g *Guard) ReadPool() *admission.ReadPool { return g.reads }
