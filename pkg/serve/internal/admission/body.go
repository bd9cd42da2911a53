package admission

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// A unary JSON body is admitted in two steps, so that a caller who declares a large body and
// sends it slowly holds only the bytes it declared, never the heap its decoding will cost. While
// the body arrives it holds its bytes (once: the buffer it is read into) in the body pool, a read
// pool (readpool.go) of a quarter of the budget with per-client shares; a client's bodies in
// flight hold at most its share of the pool, so one client's slow uploads never keep another
// client's body from being read. Once the whole body is in, its full cost is admitted through
// the fair queues (fair.go) by what the body holds; while it waits there it holds its bytes in
// the body pool and nothing of the budget. The order is always pool, then budget, and nothing
// that holds budget waits for the pool, so no call holds what another waits for while waiting
// for what that one holds.

// BodyPool is the JSON front's pool of unary bodies being read.
type BodyPool struct {
	b     *Budget
	reads *ReadPool
}

// NewBodyPool is the body pool beside b: a quarter of the budget, and at least ceiling (the largest
// body a route takes), so that any one body can be read. b keeps it (BodiesHeldBy).
func NewBodyPool(b *Budget, ceiling int64) *BodyPool {
	p := &BodyPool{b: b, reads: NewReadPool(b.capacity, ceiling)}
	b.bodies.Store(p)
	return p
}

// BodiesHeldBy is what client's bodies being read hold of the body pool (for pkg/serve's
// whole-server tests, which see the budget but not the front's pool).
func (b *Budget) BodiesHeldBy(client string) int64 {
	if p := b.bodies.Load(); p != nil {
		return p.reads.HeldBy(client)
	}
	return 0
}

// Take holds the bytes of client's body (whose concurrency limit is conc, 0 for none) before it
// is read: declared (-1: not declared), or limit when it declared none. It waits up to a second
// for room in the client's share and in the pool, then refuses: rpcerr.Overloaded (503,
// Retry-After 1), counted as a read_pool refusal of the http front. A body that skips the budget
// (a small one of a route other than the group forecasts, Budget.Cost) holds nothing (nil).
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

// AdmitBody admits a JSON request of client whose body has been read, by what the body costs (a
// group forecast by the students it can hold, GroupCostOfBody; another route by its size),
// waiting in the client's queue (fair.go) up to the budget's wait.
func (b *Budget) AdmitBody(ctx context.Context, client string, group bool, body []byte) (*Grant, error) {
	cost := b.Cost(false, int64(len(body)), true)
	if group {
		cost = b.GroupCostOfBody(body)
	}
	return b.admitCall(ctx, "http", client, cost)
}
