package admission

// The gRPC read pool. gRPC reads a call's whole message, up to the server-wide receive limit,
// before any interceptor runs; a call with a token takes the most gRPC may read for it from this
// pool before its handler lets gRPC read its message, and gives it back once the message is
// decoded (the gRPC guard does both). The pool is a quarter of the budget beside it, so reads and
// the work they bring stay within the memory the budget was sized for; a read that finds the pool
// full waits up to readWait, then is refused.

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
	sem  *semaphore.Weighted
	size int64
}

// NewReadPool sizes the pool from the budget, and at least one read of the largest message.
func NewReadPool(budget, ceiling int64) *ReadPool {
	n := max(budget/readPoolShare, ceiling)
	return &ReadPool{sem: semaphore.NewWeighted(n), size: n}
}

// Read is one call's hold on the read pool; Done gives it back, once (nil-safe).
type Read struct {
	pool *ReadPool
	n    int64
	once sync.Once
}

func (r *Read) Done() {
	if r != nil {
		r.once.Do(func() { r.pool.sem.Release(r.n) })
	}
}

// Take holds n bytes of the pool, waiting up to readWait (or the call's end) for them.
func (p *ReadPool) Take(ctx context.Context, n int64) (*Read, bool) {
	n = min(n, p.size)
	if !p.sem.TryAcquire(n) {
		wait, cancel := context.WithTimeout(ctx, readWait)
		err := p.sem.Acquire(wait, n)
		cancel()
		if err != nil {
			return nil, false
		}
	}
	return &Read{pool: p, n: n}, true
}

// Size is the pool's size in bytes.
func (p *ReadPool) Size() int64 { return p.size }
