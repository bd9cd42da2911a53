package admission

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fair admission. A call that does not fit waits in its client's queue, holding none of the
// budget, up to the budget's wait. Only the first of the line of clients' oldest calls waits in
// the semaphore; once admitted, its client's next call joins the back of the line: round-robin by
// client, settled under the queues' lock, not by which goroutine reaches the semaphore first.

type waiter struct {
	client string
	turn   chan struct{} // closed once the call is first in line: it may wait in the semaphore
}

// queues are the calls waiting for the budget: a FIFO per client, and the line of the clients'
// oldest calls in turn order. Guarded by mu, but for waiting (atomic: read without the lock).
type queues struct {
	mu       sync.Mutex
	byClient map[string][]*waiter
	line     []*waiter
	waiting  atomic.Int64
}

// SetWait sets how long a call that does not fit waits (0: refused at once), before any use.
func (b *Budget) SetWait(d time.Duration) { b.wait = d }

// admit takes cost from the budget for client's call, waiting in its queue up to wait when it does
// not fit or others wait; false: refused. A cost of 0 is granted nil (most requests: no allocation).
func (b *Budget) admit(ctx context.Context, client string, cost int64, wait time.Duration) (*Grant, bool) {
	cost = min(cost, b.capacity) // a request larger than the whole budget runs alone
	if cost <= 0 {
		return nil, true
	}
	if b.q.waiting.Load() == 0 && b.sem.TryAcquire(cost) {
		return b.grant(cost), true
	}
	if wait > 0 {
		ctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		if b.q.inTurn(ctx, client, func() error { return b.sem.Acquire(ctx, cost) }) == nil {
			return b.grant(cost), true
		}
	}
	b.refused.Inc()
	return nil, false
}

// inTurn runs acquire once client's call is first in line, or fails with ctx.
func (q *queues) inTurn(ctx context.Context, client string, acquire func() error) error {
	w := &waiter{client: client, turn: make(chan struct{})}
	q.mu.Lock()
	if len(q.byClient[client]) == 0 {
		q.line = append(q.line, w)
		if len(q.line) == 1 {
			close(w.turn)
		}
	}
	q.byClient[client] = append(q.byClient[client], w)
	q.waiting.Add(1)
	q.mu.Unlock()
	var err error
	select {
	case <-w.turn:
		err = acquire()
	case <-ctx.Done():
		err = ctx.Err()
	}
	q.leave(w, err == nil)
	return err
}

// leave takes w out of the queues. When it was in line, its client's next call takes its place:
// at the back when w was admitted, where w stood when it gave up.
func (q *queues) leave(w *waiter, admitted bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting.Add(-1)
	calls := q.byClient[w.client]
	i := slices.Index(calls, w)
	calls = slices.Delete(calls, i, i+1)
	if len(calls) == 0 {
		delete(q.byClient, w.client)
	} else {
		q.byClient[w.client] = calls
	}
	if i > 0 {
		return // not in line
	}
	at := slices.Index(q.line, w)
	switch {
	case len(calls) > 0 && !admitted:
		q.line[at] = calls[0]
	case len(calls) > 0:
		q.line = append(slices.Delete(q.line, at, at+1), calls[0])
	default:
		q.line = slices.Delete(q.line, at, at+1)
	}
	if at == 0 && len(q.line) > 0 {
		close(q.line[0].turn)
	}
}
