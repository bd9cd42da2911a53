package batch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Ordered runs one stream of records that arrive as messages (gRPC's batch streams), in order and
// memory as Serve: recv reads the next (io.EOF after the last), weigh (nil: none) says what one
// holds, answer answers one (it must not panic and must honour ctx), send writes one. When recv
// fails, the records read are answered, then Ordered returns its error (nil for io.EOF); else the
// cause. recv is not waited for (it may block until gRPC ends the stream), nor called once done.
func Ordered[R, A any](ctx context.Context, recv func() (R, error), weigh func(R) int, answer func(context.Context, R) A, send func(A) error, o Options) (sent int, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sent, _, err = pipeline[R, A]{recv: recv, weigh: weigh, send: send,
		answer: func(ctx context.Context, r R) (A, int) { return answer(ctx, r), 0 },
	}.run(ctx, cancel, o)
	return sent, err
}

// pipeline is one ordered stream, Ordered's or Serve's: the reader, o.Workers and the sender.
type pipeline[R, A any] struct {
	recv   func() (R, error)
	weigh  func(R) int
	answer func(context.Context, R) (A, int) // the answer, and the bytes it adds to those held
	send   func(A) error
	idle   func() error // called when the next answer is not ready (Serve flushes what it wrote)
	// fromBody (Serve's): a record is answered only within the bound (its answer is held too),
	// and the reader is waited for (the request body must not be read once Serve has returned).
	fromBody bool
}

// run runs the stream until it ends (cancelling ctx with why, when it ended early) and returns
// once no answer is in progress; peak is the most bytes held at once.
func (p pipeline[R, A]) run(ctx context.Context, cancel context.CancelCauseFunc, o Options) (sent int, peak int64, err error) {
	o = o.withDefaults()
	type item struct {
		seq    int
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
	var wg sync.WaitGroup
	read := func() {
		defer close(queue)
		defer close(work)
		defer recoverRead(ctx, o.Log, readErr)
		for seq := 0; ; seq++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil || !held.wait(seq) {
				readErr <- context.Cause(ctx)
				return
			}
			rec, err := p.recv()
			if err != nil {
				// Still answered after a message the transport refused, as after the last.
				if errors.Is(err, io.EOF) {
					err = nil
				}
				readErr <- err
				return
			}
			it := &item{seq: seq, rec: rec, done: make(chan struct{})}
			if p.weigh != nil {
				it.weight = p.weigh(rec)
				held.add(it.weight)
			}
			queue <- it // never blocks: a slot was taken
			work <- it  // nor this: no more items than slots
		}
	}
	if p.fromBody {
		wg.Go(read)
	} else {
		go read()
	}
	for range o.Workers {
		wg.Go(func() {
			for {
				select {
				case it, ok := <-work:
					if !ok || (p.fromBody && !held.wait(it.seq)) {
						return
					}
					var n int
					it.ans, n = p.answer(ctx, it.rec)
					it.weight += n
					held.add(n)
					close(it.done)
				case <-ctx.Done():
					return
				}
			}
		})
	}
	drained := false // every record read was answered and sent: nothing left to cancel
	err = func() error {
		for {
			it, ok, err := whenReady(ctx, queue, p.idle)
			if err != nil {
				return err
			}
			if !ok {
				drained = true
				return <-readErr // nil after the caller's last record
			}
			if _, _, err := whenReady(ctx, it.done, p.idle); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err := p.send(it.ans); err != nil {
				return err
			}
			sent++
			held.written(it.weight)
			<-slots
		}
	}()
	if err != nil && !drained {
		cancel(err)
	}
	wg.Wait()
	return sent, held.maxHeld(), err
}

// whenReady receives from c, calling idle first (when there is one) if c is not ready yet.
func whenReady[T any](ctx context.Context, c <-chan T, idle func() error) (v T, ok bool, err error) {
	select {
	case v, ok = <-c:
		return v, ok, nil
	default:
	}
	if idle != nil {
		if err := idle(); err != nil {
			return v, false, err
		}
	}
	select {
	case v, ok = <-c:
		return v, ok, nil
	case <-ctx.Done():
		return v, false, context.Cause(ctx)
	}
}

// recoverRead is the one net of a stream's reader goroutine: reading and decoding a record is the
// frame's code, and a panic there must end this stream (Internal), not the process.
func recoverRead(ctx context.Context, log *slog.Logger, readErr chan<- error) {
	if v := recover(); v != nil {
		log.ErrorContext(ctx, "batch: reading a record panicked", "panic", v, "stack", string(debug.Stack()))
		readErr <- rpcerr.Internal()
	}
}
