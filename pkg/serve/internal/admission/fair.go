package admission

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fair admission. A call that does not fit the budget waits in its client's queue, holding
// none of the budget, for up to the budget's wait (YARDSTICK_ADMISSION_WAIT), then is refused
// as before. The clients' oldest calls stand in a line, and only the first in line waits in the
// budget's semaphore: once it is admitted its client's next call joins the back of the line, so
// the queues are served round-robin by client (a client with forty queued group forecasts gets
// one admitted per turn, so another client's single one waits behind at most one of them, not
// forty), and a client new to the queues takes its turn last. The turn is strict: when the call
// whose turn it is does not fit yet, later ones wait too (a large call is never starved by small
// ones). A call that arrives while any wait is admitted only through its queue. The order is
// settled under the queues' lock as each call arrives, not by which goroutine reaches the
// semaphore first.

// waiter is one call waiting for the budget.
type waiter struct {
	client string
	turn   chan struct{} // closed once the call is first in line: it may wait in the semaphore
}

// queues are the calls waiting for the budget: a FIFO per client, and the line of the clients'
// oldest calls in turn order. Guarded by mu, but for waiting, read by the path that does not wait.
type queues struct {
	mu       sync.Mutex
	byClient map[string][]*waiter
	line     []*waiter
	waiting  atomic.Int64
}

// SetWait sets how long a call that does not fit waits in its client's queue; 0 (the default)
// refuses it at once. Only before the budget is used.
func (b *Budget) SetWait(d time.Duration) { b.wait = d }

// admit takes cost from the budget for client's call, waiting in the client's queue when it does
// not fit (or when others wait before it: none jumps them), up to wait or ctx's end. ok false:
// refused. A cost of 0 takes nothing, never waits, and its grant is nil (most requests: no
// allocation).
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
// at the back of the line when w was admitted (the next client's turn), where w stood when it
// gave up (the turn stays with its client). When it was first, the new first's turn comes.
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

// Waiting is the calls waiting in the queues (for pkg/serve's whole-server test of fairness
// between clients, which sees the budget but not its queues).
func (b *Budget) Waiting() int { return int(b.q.waiting.Load()) }
