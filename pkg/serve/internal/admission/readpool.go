package admission

// The gRPC read pool. gRPC reads a call's whole message, up to the server-wide receive limit,
// before any interceptor runs; a call with a token takes the most gRPC may read for it from this
// pool before its handler lets gRPC read its message, and gives it back once the message is
// decoded (the gRPC guard does both). The pool is a quarter of the budget beside it, so reads and
// the work they bring stay within the memory the budget was sized for; a read that finds the pool
// full waits up to readWait, then is refused. A client's reads hold at most its share of the pool
// (share.go): its concurrency's worth of reads, at most half the pool; a quarter of it without a
// concurrency limit; one read at least. So header-only calls of one client, which hold their
// reads until the read timeout, wait on that client's share alone.

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

const (
	// readPoolShare is the read pool's size against the memory budget.
	readPoolShare = 4
	// readWait bounds how long a call waits for the read pool before it is refused.
	readWait = time.Second
)

// ReadPool is the bytes of messages gRPC may be reading at once for calls with a token (a
// semaphore: the package doc says why).
type ReadPool struct {
	sem     *semaphore.Weighted
	size    int64
	clients *shares // what each client's reads hold
}

// NewReadPool sizes the pool from the budget, and at least one read of the largest message.
func NewReadPool(budget, ceiling int64) *ReadPool {
	n := max(budget/readPoolShare, ceiling)
	return &ReadPool{sem: semaphore.NewWeighted(n), size: n, clients: newShares()}
}

// Read is one call's hold on the read pool; Done gives it back, once (nil-safe).
type Read struct {
	pool   *ReadPool
	client string
	n      int64
	once   sync.Once
}

func (r *Read) Done() {
	if r != nil {
		r.once.Do(func() {
			r.pool.sem.Release(r.n)
			r.pool.clients.give(r.client, r.n)
		})
	}
}

// Take holds n bytes of the pool for a call of client (whose concurrency limit is conc, 0 for
// none), waiting up to readWait (or the call's end) for them, within the client's share first.
func (p *ReadPool) Take(ctx context.Context, client string, conc int, n int64) (*Read, bool) {
	n = min(n, p.size)
	share := p.share(conc, n)
	// The common case first, without a timer: room in the client's share and in the pool.
	inShare := p.clients.take(nil, client, n, share)
	if inShare && p.sem.TryAcquire(n) {
		return &Read{pool: p, client: client, n: n}, true
	}
	wait, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	if !inShare && !p.clients.take(wait, client, n, share) {
		return nil, false
	}
	if err := p.sem.Acquire(wait, n); err != nil {
		p.clients.give(client, n)
		return nil, false
	}
	return &Read{pool: p, client: client, n: n}, true
}

// share is the most a client of concurrency conc (0: none) may hold of the pool in reads of n.
func (p *ReadPool) share(conc int, n int64) int64 { return shareOf(p.size, n, min(n, p.size), conc) }

// HeldBy is what client's reads hold (for pkg/serve's whole-server test of the client's share).
func (p *ReadPool) HeldBy(client string) int64 { return p.clients.heldBy(client) }

// Size is the pool's size in bytes.
func (p *ReadPool) Size() int64 { return p.size }
