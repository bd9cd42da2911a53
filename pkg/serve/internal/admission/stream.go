package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Streams are admitted with a small reserve, hold more only as their bytes arrive (Hold), and
// together at most half the budget, so that the records they run, which wait for budget instead of
// being refused, find room once the calls in progress end: a record costs at most the other half.

// StreamCost is the most one stream holds of the budget: its reserve and its records' bytes
// (internal/batch's MaxHeld of 32 MiB, a line and the answers in progress).
const StreamCost = 48 << 20

// StreamReserve is what a stream takes from the budget when it is admitted, before any byte of
// its body: a line of the default line limit (1 MiB) and the engine's buffers, rounded up.
const StreamReserve = 2 << 20

// Stream is one stream's admission.
type Stream struct {
	b       *Budget
	client  string
	share   int64 // its client's share of the streams' half
	reserve int64
	once    sync.Once

	mu    sync.Mutex
	free  int64           // of the reserve, not held by a record
	holds map[*int64]bool // the records' holds beyond the reserve, each its size: Release ends them
	ended bool            // Release ran: holds still open were given back with it
}

// AdmitStream admits one stream of client on front with its reserve, or refuses it: 429 when the
// client's streams hold its share, rpcerr.Overloaded when the streams' half is full.
func (b *Budget) AdmitStream(front, client string, conc int) (*Stream, error) {
	reserve := min(int64(StreamReserve), b.capacity/2)
	share := b.streamShare(conc)
	if !b.clientStreams.take(nil, client, reserve, share) {
		b.Refuse(front, CauseClientShare)
		secs, retry := rpcerr.Retry(RetryAfter)
		return nil, rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, "Too many streams in progress.",
			fmt.Sprintf("This client's open streams hold its share of the streams' memory (%d MiB); end one, or retry after %d seconds.", share>>20, secs), retry)
	}
	if b.streams.TryAcquire(reserve) {
		if b.sem.TryAcquire(reserve) {
			b.grant(reserve)
			return &Stream{b: b, client: client, share: share, reserve: reserve, free: reserve, holds: map[*int64]bool{}}, nil
		}
		b.streams.Release(reserve)
	}
	b.clientStreams.give(client, reserve)
	b.refused.Inc()
	b.Refuse(front, CauseMemoryBudget)
	return nil, rpcerr.Overloaded(RetryAfter)
}

// streamShare is the share of the streams' half a client of concurrency conc (0: none) may hold.
func (b *Budget) streamShare(conc int) int64 {
	return shareOf(b.capacity/2, StreamCost, min(int64(StreamReserve), b.capacity/2), conc)
}

var errStreamEnded = errors.New("admission: the stream has ended")

// Release gives the stream's reserve back (once; nil-safe). Its records give back what they hold.
func (s *Stream) Release() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		s.mu.Lock()
		s.ended = true
		holds := s.holds
		s.holds = nil
		s.mu.Unlock()
		for n := range holds {
			s.give(*n)
		}
		s.give(s.reserve)
	})
}

// give gives back n of the stream's: its reserve, or a record's hold beyond it.
func (s *Stream) give(n int64) {
	s.b.streams.Release(n)
	s.b.clientStreams.give(s.client, n)
	s.b.give(n)
}

// Hold takes n bytes of a record until done is called (once), from the stream's reserve while it
// has room, else from the client's share, the streams' half and the budget, waiting (never
// refusing: the stream slows down). The error is ctx's cause. A nil stream holds nothing.
func (s *Stream) Hold(ctx context.Context, n int64) (done func(), err error) {
	if s == nil || n <= 0 {
		return func() {}, nil
	}
	n = min(n, s.share, s.b.capacity/2)
	for {
		freed := s.b.clientStreams.freed(s.client)
		s.mu.Lock()
		if n <= s.free {
			s.free -= n
			s.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					s.mu.Lock()
					s.free += n
					s.mu.Unlock()
					s.b.clientStreams.wake(s.client) // a record waiting may fit the reserve now
				})
			}, nil
		}
		s.mu.Unlock()
		if s.b.clientStreams.take(nil, s.client, n, s.share) {
			break
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if err := s.b.streams.Acquire(ctx, n); err != nil {
		s.b.clientStreams.give(s.client, n)
		return nil, context.Cause(ctx)
	}
	if err := s.b.sem.Acquire(ctx, n); err != nil {
		s.b.streams.Release(n)
		s.b.clientStreams.give(s.client, n)
		return nil, context.Cause(ctx)
	}
	s.b.grant(n)
	h := &n
	s.mu.Lock()
	if s.ended { // the stream ended while the record waited
		s.mu.Unlock()
		s.give(n)
		return nil, errStreamEnded
	}
	s.holds[h] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		open := s.holds[h]
		delete(s.holds, h)
		s.mu.Unlock()
		if open {
			s.give(n)
		}
	}, nil
}

// AdmitRecord takes a record's cost from the budget, waiting (never refusing); nil: no cost.
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
