package admission

import (
	"context"
	"sync"
)

// Streams (the batch and group streams) are admitted once for their whole life: a stream holds
// at most the engine's bound of records and answers (internal/batch: MaxHeld, 32 MiB, plus a line
// and the answers in progress), so it takes StreamCost from the budget, or is refused with 503
// before its head. Streams together take at most half the budget, so that the records they run,
// which wait for budget instead of being refused (a record is never answered 503), always find
// room once the calls in progress end: a record costs at most the other half.

// StreamCost is what one stream takes from the budget for its whole life.
const StreamCost = 48 << 20

// Stream is one stream's admission.
type Stream struct {
	b     *Budget
	grant *Grant // its share of the budget
	once  sync.Once
}

// AdmitStream admits one stream of front ("http" or "grpc"), or refuses it (the caller answers
// rpcerr.Overloaded, with Retry-After) when the budget, or the streams' half of it, is full.
func (b *Budget) AdmitStream(front string) (*Stream, bool) {
	cost := min(int64(StreamCost), b.capacity/2)
	if b.streams.TryAcquire(cost) {
		if b.sem.TryAcquire(cost) {
			return &Stream{b: b, grant: b.grant(cost)}, true
		}
		b.streams.Release(cost)
	}
	b.refused.Inc()
	b.Refuse(front, CauseMemoryBudget)
	return nil, false
}

type streamKey struct{}

// WithStream is ctx carrying the stream's admission, for the records it runs (a gRPC stream's
// handler finds it there: the guard admits the stream before the handler runs).
func WithStream(ctx context.Context, s *Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

// StreamFrom is the stream admission of ctx, or nil.
func StreamFrom(ctx context.Context) *Stream {
	s, _ := ctx.Value(streamKey{}).(*Stream)
	return s
}

// Release gives the stream's admission back (once; nil-safe).
func (s *Stream) Release() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		s.b.streams.Release(s.grant.cost)
		s.grant.Release()
	})
}

// AdmitRecord takes a record's cost from the budget, waiting for it in the budget's FIFO while the
// budget is full (never refusing): nil when it costs nothing. The error is ctx's cause, when the
// stream ended while the record waited.
func (s *Stream) AdmitRecord(ctx context.Context, cost int64) (*Grant, error) {
	cost = min(cost, s.b.capacity/2)
	if cost <= 0 {
		return nil, nil
	}
	if err := s.b.sem.Acquire(ctx, cost); err != nil {
		return nil, context.Cause(ctx)
	}
	return s.b.grant(cost), nil
}
