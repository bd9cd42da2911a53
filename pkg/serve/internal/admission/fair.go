package admission

import (
	"context"
	"time"
)

// Fair admission. A call that does not fit the budget waits in its client's queue, holding
// none of the budget, for up to the budget's wait (YARDSTICK_ADMISSION_WAIT), then is refused
// as before. The queues are served round-robin by client: when budget is given back, the
// client whose turn it is gets its oldest waiting call admitted, then the next client, and so
// on; a client with forty queued group forecasts gets one admitted per turn, so another
// client's single one waits behind at most one of them, not forty. The turn is strict: when
// the call whose turn it is does not fit yet, later ones wait too (a large call is never
// starved by small ones). A call that arrives while any wait is admitted only through its queue.
//
// The queues are hand-written rather than golang.org/x/sync/semaphore (readpool.go uses it):
// a Weighted semaphore is one FIFO for everyone, which is the head-of-line blocking by one
// client that this exists to remove; per-client FIFOs and a ring of clients are a few lines
// under the budget's own mutex.

// waiter is one call waiting in its client's queue.
type waiter struct {
	client string
	cost   int64
	ready  chan struct{} // closed once admitted
	grant  *Grant        // set, under the budget's mutex, when admitted
}

// queues are the waiting calls: a FIFO per client and the ring of clients with a call waiting,
// served from turn. Guarded by Budget.mu.
type queues struct {
	byClient map[string][]*waiter
	ring     []string
	turn     int
	waiting  int
}

// SetWait sets how long a call that does not fit waits in its client's queue; 0 (the
// default) refuses it at once.
func (b *Budget) SetWait(d time.Duration) {
	b.mu.Lock()
	b.wait = d
	b.mu.Unlock()
}

// AdmitFor takes cost from the budget for client's call, waiting in the client's queue when it
// does not fit (or when others wait before it), up to the budget's wait or ctx's end. ok false:
// refused (counted as Admit counts it). A cost of 0 takes nothing and never waits.
func (b *Budget) AdmitFor(ctx context.Context, client string, cost int64) (*Grant, bool) {
	cost = min(cost, b.capacity)
	if cost <= 0 {
		return nil, true
	}
	b.mu.Lock()
	if b.q.waiting == 0 && b.used+cost <= b.capacity {
		g := b.take(cost)
		b.mu.Unlock()
		return g, true
	}
	if b.wait <= 0 {
		b.refused.Inc()
		b.mu.Unlock()
		return nil, false
	}
	w := &waiter{client: client, cost: cost, ready: make(chan struct{})}
	b.enqueue(w)
	wait := b.wait
	b.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return w.grant, true
	case <-timer.C:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.grant != nil { // admitted as the wait ended
		return w.grant, true
	}
	b.dequeue(w)
	b.serve() // the head of its queue may have been what held the others
	b.refused.Inc()
	return nil, false
}

// take admits cost; the caller holds b.mu and has checked that it fits.
func (b *Budget) take(cost int64) *Grant {
	b.used += cost
	b.inUse.Set(float64(b.used))
	return &Grant{b: b, cost: cost}
}

func (b *Budget) enqueue(w *waiter) {
	if b.q.byClient == nil {
		b.q.byClient = map[string][]*waiter{}
	}
	if len(b.q.byClient[w.client]) == 0 {
		// A client new to the ring takes its turn last: before the one whose turn it is.
		b.q.ring = append(b.q.ring, "")
		copy(b.q.ring[b.q.turn+1:], b.q.ring[b.q.turn:])
		b.q.ring[b.q.turn] = w.client
		b.q.turn++
		if b.q.turn == len(b.q.ring) {
			b.q.turn = 0
		}
	}
	b.q.byClient[w.client] = append(b.q.byClient[w.client], w)
	b.q.waiting++
}

// dequeue removes w, which was not admitted, from its queue.
func (b *Budget) dequeue(w *waiter) {
	q := b.q.byClient[w.client]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	b.q.waiting--
	if len(q) > 0 {
		b.q.byClient[w.client] = q
		return
	}
	delete(b.q.byClient, w.client)
	b.leaveRing(w.client)
}

// leaveRing takes client out of the ring, keeping the turn on the client that had it (or the
// next one, when it was client's).
func (b *Budget) leaveRing(client string) {
	for i, c := range b.q.ring {
		if c != client {
			continue
		}
		b.q.ring = append(b.q.ring[:i], b.q.ring[i+1:]...)
		if i < b.q.turn {
			b.q.turn--
		}
		if b.q.turn >= len(b.q.ring) {
			b.q.turn = 0
		}
		return
	}
}

// serve admits waiting calls in turn while the call whose turn it is fits. The caller holds b.mu.
func (b *Budget) serve() {
	for len(b.q.ring) > 0 {
		client := b.q.ring[b.q.turn]
		q := b.q.byClient[client]
		w := q[0]
		if b.used+w.cost > b.capacity {
			return
		}
		w.grant = b.take(w.cost)
		close(w.ready)
		b.q.waiting--
		if len(q) == 1 {
			delete(b.q.byClient, client)
			b.leaveRing(client) // the turn moves to the next client
			continue
		}
		b.q.byClient[client] = q[1:]
		b.q.turn = (b.q.turn + 1) % len(b.q.ring)
	}
}

// Waiting is the calls waiting in the queues (for tests).
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.q.waiting
}
