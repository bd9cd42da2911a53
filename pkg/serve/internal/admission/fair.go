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
// as before. Only the oldest call of each client waits in the budget's semaphore; the next one
// joins it once that one is admitted or gone. The semaphore's FIFO of one call per client is a
// round-robin by client: a client with forty queued group forecasts gets one admitted per turn,
// so another client's single one waits behind at most one of them, not forty, and a client new
// to the queues takes its turn last. The turn is strict (the semaphore's): when the call whose
// turn it is does not fit yet, later ones wait too (a large call is never starved by small
// ones). A call that arrives while any wait is admitted only through its queue.

// queues are the calls waiting for the budget, in order per client.
type queues struct {
	mu       sync.Mutex
	byClient map[string][]chan struct{} // a client's calls; the first one's channel is closed: its turn
	waiting  atomic.Int64
}

// SetWait sets how long a call that does not fit waits in its client's queue; 0 (the default)
// refuses it at once. Only before the budget is used.
func (b *Budget) SetWait(d time.Duration) { b.wait = d }

// AdmitFor takes cost from the budget for client's call, waiting in the client's queue when it
// does not fit (or when others wait before it), up to the budget's wait or ctx's end. ok false:
// refused (counted as Admit counts it). A cost of 0 takes nothing and never waits.
func (b *Budget) AdmitFor(ctx context.Context, client string, cost int64) (*Grant, bool) {
	return b.admit(ctx, client, cost, b.wait)
}

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

// inTurn runs acquire once client's earlier calls are admitted or gone, or fails with ctx.
func (q *queues) inTurn(ctx context.Context, client string, acquire func() error) error {
	turn := make(chan struct{})
	q.mu.Lock()
	if q.byClient == nil {
		q.byClient = map[string][]chan struct{}{}
	}
	if len(q.byClient[client]) == 0 {
		close(turn)
	}
	q.byClient[client] = append(q.byClient[client], turn)
	q.waiting.Add(1)
	q.mu.Unlock()
	defer q.leave(client, turn)
	select {
	case <-turn:
		return acquire()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave takes a call out of its client's queue; when it was the oldest, the next one's turn comes.
func (q *queues) leave(client string, turn chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	calls := q.byClient[client]
	i := slices.Index(calls, turn)
	calls = slices.Delete(calls, i, i+1)
	q.waiting.Add(-1)
	if len(calls) == 0 {
		delete(q.byClient, client)
		return
	}
	if i == 0 {
		close(calls[0])
	}
	q.byClient[client] = calls
}

// Waiting is the calls waiting in the queues (for tests).
func (b *Budget) Waiting() int { return int(b.q.waiting.Load()) }
