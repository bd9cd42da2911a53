package admission

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// A unary JSON body is admitted in two steps, so that a caller who sends a large body slowly holds
// only its bytes, never its decoding's heap: while it arrives, its bytes in the body pool (a read
// pool: per-client shares); once in, its cost from the budget. The order is always pool, then
// budget, and nothing that holds budget waits for the pool: no deadlock.

// BodyPool is the JSON front's pool of unary bodies being read.
type BodyPool struct {
	b     *Budget
	reads *ReadPool
}

// NewBodyPool is the body pool beside b: a quarter of the budget, at least ceiling (the largest body).
func NewBodyPool(b *Budget, ceiling int64) *BodyPool {
	return &BodyPool{b: b, reads: b.Report("http", NewReadPool(b.capacity, ceiling))}
}

// Take holds client's body's declared bytes (limit when -1) before it is read, waiting up to a
// second, then refusing (rpcerr.Overloaded). A body that skips the budget holds nothing (nil).
func (p *BodyPool) Take(ctx context.Context, client string, conc int, group bool, declared, limit int64) (*Read, error) {
	if !group && declared >= 0 && declared < SmallRequestBytes {
		return nil, nil
	}
	n := declared
	if n < 0 {
		n = limit
	}
	r, ok := p.reads.Take(ctx, client, conc, n)
	if !ok {
		p.b.Refuse("http", CauseReadPool)
		return nil, rpcerr.Overloaded(RetryAfter)
	}
	return r, nil
}
