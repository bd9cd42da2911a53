package grpcguard

import (
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
)

// What the frame's tests read of the guard, and change before it serves. None of it is needed to
// serve.

// Ceiling is the server-wide receive limit: the largest message limit of the methods served.
func (g *Guard) Ceiling() int64 { return g.ceiling }

// ReadTimeout is how long a call that sends one message has to send it.
func (g *Guard) ReadTimeout() time.Duration { return g.readTimeout }

// SetReadTimeout changes the read timeout; only before the server serves.
func (g *Guard) SetReadTimeout(d time.Duration) { g.readTimeout = d }

// SetStreamIdle changes a batch stream's idle limit, for the streams opened after it.
func (g *Guard) SetStreamIdle(d time.Duration) { g.streamIdle.Store(int64(d)) }

// SetReadPool replaces the read pool; only before the server serves.
func (g *Guard) SetReadPool(p *admission.ReadPool) { g.reads = p }

// ReadPool is the pool of bytes gRPC may be reading at once for calls with a token.
func (g *Guard) ReadPool() *admission.ReadPool { return g.reads }

// SetClock replaces the connection watch's clock; only before the server serves.
func (g *Guard) SetClock(now func() time.Time) { g.watch.now = now }

// SlotsHeld is how many read slots calls without a token hold: logins, and health or reflection.
func (g *Guard) SlotsHeld() (logins, infra int) { return len(g.logins), len(g.infra) }

// RecordsLeft is what the codec keeps of messages no interceptor has taken yet: the records stored,
// and the count of them it believes waiting.
func (g *Guard) RecordsLeft() (stored int, waiting int64) {
	g.codec.records.Range(func(any, any) bool { stored++; return true })
	return stored, g.codec.waiting.Load()
}

// RecordFrom is the size from which the codec records a message of the request type name.
func (g *Guard) RecordFrom(name protoreflect.FullName) int64 { return g.codec.limits[name].recordFrom }

// OpenCalls is how many calls the tap handle let in that no interceptor has taken yet.
func (g *Guard) OpenCalls() int {
	g.open.mu.Lock()
	defer g.open.mu.Unlock()
	return len(g.open.calls)
}
