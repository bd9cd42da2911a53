package batch

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Ordered runs one stream of records that arrive as messages rather than lines (gRPC's batch
// streams, where the transport frames each record and its flow control stops a caller that
// sends too fast): recv reads the next record (io.EOF once the caller has sent its last), weigh
// (nil: none) says what a record read holds in memory, answer answers one, send writes one
// answer. As Serve: answers leave in input order, at most o.InFlight records are read ahead of
// the answers (a caller that takes no answer stops the reading), and no record is read while
// those read weigh o.MaxHeld or more, save the oldest unanswered one; o.Workers are answered at
// once. When recv fails, the records read are answered and sent, then Ordered returns recv's
// error; when ctx ends or send fails, no record is started and Ordered returns once the answers
// in progress have. answer must not panic (it turns a fault into an answer itself) and
// must honour its context.
//
// recv is not waited for: it may block until the stream itself ends, which is after Ordered
// has returned (gRPC ends a stream when its handler returns). It is never called again once
// Ordered has returned. The error is nil once every record was answered and sent after recv's
// io.EOF; else why the stream ended early (recv's error, send's, or ctx's cause).
func Ordered[R, A any](ctx context.Context, recv func() (R, error), weigh func(R) int, answer func(context.Context, R) A, send func(A) error, o Options) (sent int, err error) {
	o = o.withDefaults()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type item struct {
		rec    R
		weight int
		ans    A
		done   chan struct{}
	}
	slots := make(chan struct{}, o.InFlight) // one per record read and not yet sent
	queue := make(chan *item, o.InFlight)    // to the sender, in input order
	work := make(chan *item, o.InFlight)     // to the workers
	held, stopBudget := newBudget(ctx, int64(o.MaxHeld))
	defer stopBudget()
	readErr := make(chan error, 1)
	go func() {
		defer close(queue)
		defer close(work)
		for seq := 0; ; seq++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				readErr <- context.Cause(ctx)
				return
			}
			if !held.wait(seq) {
				readErr <- context.Cause(ctx)
				return
			}
			rec, err := recv()
			if err != nil {
				// The records read are still answered: after a message the transport refused
				// (the stream then ends with its status) as after the last. A caller that is
				// gone fails the next send instead.
				if errors.Is(err, io.EOF) {
					err = nil
				}
				readErr <- err
				return
			}
			it := &item{rec: rec, done: make(chan struct{})}
			if weigh != nil {
				it.weight = weigh(rec)
				held.add(it.weight)
			}
			queue <- it // never blocks: a slot was taken
			work <- it  // nor this: no more items than slots
		}
	}()
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for {
				select {
				case it, ok := <-work:
					if !ok {
						return
					}
					it.ans = answer(ctx, it.rec)
					close(it.done)
				case <-ctx.Done():
					return
				}
			}
		})
	}
	err = func() error {
		for {
			var it *item
			var ok bool
			select {
			case it, ok = <-queue:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if !ok {
				return <-readErr // nil after the caller's last record
			}
			select {
			case <-it.done:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if err := send(it.ans); err != nil {
				return err
			}
			sent++
			held.written(it.weight)
			<-slots
		}
	}()
	cancel(err)
	wg.Wait()
	return sent, err
}
