package batch

import (
	"context"
	"sync"
)

// budget bounds the bytes of records and answers a stream holds: a record is read, and
// dispatched, only while they are under max, save the oldest unanswered one (the package doc).
type budget struct {
	mu   sync.Mutex
	cond sync.Cond
	held int64
	max  int64
	next int // sequence number of the oldest unanswered record
	peak int64
	done bool
}

func newBudget(ctx context.Context, max int64) (*budget, func() bool) {
	b := &budget{max: max}
	b.cond.L = &b.mu
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.done = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b, stop
}

// wait blocks until record seq may be read or dispatched; false once the stream is over.
func (b *budget) wait(seq int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.done && b.held >= b.max && seq != b.next {
		b.cond.Wait()
	}
	return !b.done
}

func (b *budget) add(n int) {
	b.mu.Lock()
	b.held += int64(n)
	b.peak = max(b.peak, b.held)
	b.mu.Unlock()
}

// written frees a written record's n bytes and makes the next record the oldest.
func (b *budget) written(n int) {
	b.mu.Lock()
	b.held -= int64(n)
	b.next++
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *budget) maxHeld() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}
