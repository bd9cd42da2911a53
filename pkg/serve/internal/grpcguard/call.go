package grpcguard

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// call is one direct gRPC call as the guard follows it: made in the tap handle, seen by the
// interceptors through the call's context (the context the tap handle returns is the one every
// later stage derives from). The tap handle writes it before the call's goroutine starts;
// afterwards only that goroutine touches it, except release, logged and the list links (under
// openCalls' lock).
type call struct {
	method   string
	route    *routes.Route // the method's route (internal/routes)
	clientID string        // the client the tap handle authenticated, when it did
	logged   atomic.Bool   // an interceptor logged and counted the call
	// While the call is in openCalls: its context (the tap handle's answer), headers and start.
	ctx        context.Context
	header     metadata.MD
	start      time.Time
	prev, next *call
	listed     bool
	slots      chan struct{}
	conn       *peer.Peer         // the connection whose slot count the call holds; nil: none
	cancel     context.CancelFunc // ends the call (its message did not come in time); nil: none
	timedOut   atomic.Bool        // the sweep ended it: its message had not come in time
	read       *admission.Read    // what the call holds of the read pool (read.go); nil: none
	once       sync.Once
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
		}
		if c.conn != nil {
			g.conns.give(c.conn)
		}
	})
}

// hold ties a read slot, and the connection's count of calls in the slots, to the call: given
// back when the call's stream ends, whatever ends it. It returns the context the call runs with.
func (c *call) hold(ctx context.Context, g *Guard, slots chan struct{}, conn *peer.Peer) context.Context {
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
