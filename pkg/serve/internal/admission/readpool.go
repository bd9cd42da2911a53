package admission

// The read pools, of gRPC messages with a token (grpcguard's read.go) and of JSON bodies (body.go):
// a quarter of the budget, so that reads and their work stay within what the budget was sized for.

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
)

const (
	readPoolShare = 4           // the pool is 1/readPoolShare of the budget
	readWait      = time.Second // the longest a call waits for the pool before it is refused
)

// ReadPool is the bytes of the requests of one front that may be being read at once.
type ReadPool struct {
	sem     *semaphore.Weighted
	size    int64
	clients *shares          // what each client's reads hold
	inUse   prometheus.Gauge // what all of them hold, once Report names the pool's front; nil before
}

// NewReadPool sizes the pool from the budget, and at least one read of the largest message.
func NewReadPool(budget, ceiling int64) *ReadPool {
	n := max(budget/readPoolShare, ceiling)
	return &ReadPool{sem: semaphore.NewWeighted(n), size: n, clients: newShares()}
}

// Report has b's series show p as front's read pool ("http": the body pool; "grpc"): its size,
// and what its reads hold. Before p is used.
func (b *Budget) Report(front string, p *ReadPool) *ReadPool {
	b.poolSize.WithLabelValues(front).Set(float64(p.size))
	p.inUse = b.poolInUse.WithLabelValues(front)
	return p
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
			r.pool.held(-r.n)
		})
	}
}

// Take holds n bytes for client (concurrency conc) within its share, waiting up to readWait.
func (p *ReadPool) Take(ctx context.Context, client string, conc int, n int64) (*Read, bool) {
	n = min(n, p.size)
	share := shareOf(p.size, n, n, conc)
	// The common case first, without a timer.
	inShare := p.clients.take(nil, client, n, share)
	if !inShare || !p.sem.TryAcquire(n) {
		wait, cancel := context.WithTimeout(ctx, readWait)
		defer cancel()
		if !inShare && !p.clients.take(wait, client, n, share) {
			return nil, false
		}
		if err := p.sem.Acquire(wait, n); err != nil {
			p.clients.give(client, n)
			return nil, false
		}
	}
	p.held(n)
	return &Read{pool: p, client: client, n: n}, true
}

// held adds n to what the pool's series says its reads hold (none before Report).
func (p *ReadPool) held(n int64) {
	if p.inUse != nil {
		p.inUse.Add(float64(n))
	}
}

// Size is the pool's size in bytes.
func (p *ReadPool) Size() int64 { return p.size }
