package token

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Defaults of Options.HashConcurrency and Options.HashQueueWait, and the Retry-After of a busy
// answer.
const (
	// DefaultHashQueueWait: a login that cannot start its argon2 check within half a second is
	// told to come back (ErrBusy) rather than queue longer: wait plus one check (about 0.1-0.2 s)
	// stays under a second, and a flood turns into quick 503s instead of a growing queue.
	DefaultHashQueueWait = 500 * time.Millisecond
	// BusyRetryAfter is the wait a busy answer suggests: about five argon2 checks on one slot.
	BusyRetryAfter = time.Second
)

// defaultHashConcurrency is half the usable cores, at least 1 and at most 4: argon2 checks can
// take at most half the CPU, so scoring keeps the other half however many logins arrive, and at
// most 4 × 64 MiB of memory (default parameters).
func defaultHashConcurrency() int { return min(max(runtime.GOMAXPROCS(0)/2, 1), 4) }

// gate bounds the argon2 checks running at once. A check waits at most wait for a slot;
// running and peak are kept for the tests that hold the bound, at the cost of two atomics.
type gate struct {
	slots   chan struct{}
	wait    time.Duration
	running atomic.Int32
	peak    atomic.Int32
}

func newGate(n int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, n), wait: wait}
}

// enter takes a slot, waiting at most g.wait; false means the caller is to answer busy.
func (g *gate) enter() bool {
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			return false
		}
	}
	n := g.running.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return true
}

func (g *gate) leave() {
	g.running.Add(-1)
	<-g.slots
}
