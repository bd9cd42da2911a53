package quota

import (
	"context"
	"sync"
	"time"
)

type paceKey struct{}

// pacer is a stream's hold, in its context, on its client's rate (Pace) and concurrency
// (RecordSlot).
type pacer struct {
	l      *Limiter
	client string

	mu      sync.Mutex
	running int           // the stream's records running
	freed   chan struct{} // closed when one ends, for the records waiting; nil: none waits
}

// RecordSlot waits for a place among the records of ctx's stream running at once: at most its
// client's concurrency (read at each record: a reload applies mid-stream), whatever the engine's
// workers. done gives the place back (once). The error is ctx's cause, when the stream ends while
// the record waits. A context without a stream's pacer passes at once.
func RecordSlot(ctx context.Context) (done func(), err error) {
	p, _ := ctx.Value(paceKey{}).(*pacer)
	if p == nil {
		return func() {}, nil
	}
	for {
		_, _, conc := p.l.limitsOf(p.client)
		p.mu.Lock()
		if conc <= 0 || p.running < conc {
			p.running++
			p.mu.Unlock()
			var once sync.Once
			return func() { once.Do(p.give) }, nil
		}
		if p.freed == nil {
			p.freed = make(chan struct{})
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (p *pacer) give() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	if p.freed != nil {
		close(p.freed)
		p.freed = nil
	}
}

// OpenStream admits a stream of client: a place of its concurrency for the stream's life (429
// when none is free) and, on the context returned, its pacer. The stream's rate is spent by its
// records, not by its opening (its head carries the Policy alone).
func (l *Limiter) OpenStream(ctx context.Context, client string) (context.Context, *Slot, error) {
	s, err := l.Acquire(client)
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, paceKey{}, &pacer{l: l, client: client}), s, nil
}

// Pace takes one of the stream's client's requests, waiting while its rate is spent (never
// refusing: a stream slows down); its error is ctx's when the stream ends while it waits. A
// context without a stream's pacer passes at once.
func Pace(ctx context.Context) error {
	p, _ := ctx.Value(paceKey{}).(*pacer)
	if p == nil {
		return nil
	}
	for first := true; ; first = false {
		pol, rated, _ := p.l.limitsOf(p.client) // read each time: a reload applies mid-stream
		if !rated {
			return nil
		}
		d := p.l.take(p.client, pol)
		if d.allowed {
			return nil
		}
		if first {
			p.l.metrics.throttled(p.client, ReasonStream) // a record slowed counts once
		}
		select {
		case <-time.After(d.wait):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Concurrency is the client's concurrency limit (0: none; none of a nil limiter): a client's
// share of the streams' budget and of the gRPC read pool follows it (internal/admission).
func (l *Limiter) Concurrency(client string) int {
	if l == nil {
		return 0
	}
	_, _, conc := l.limitsOf(client)
	return conc
}
