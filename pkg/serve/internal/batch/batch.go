package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Dispatcher answers one record exactly as the unary path would answer its request: the status
// and the answer body, error bodies included (a 404 NotFound body for a path that is not a
// unary path of the service, 403 for a path the caller's token lacks). ctx is the stream's: it
// carries the caller's identity and is cancelled when the stream ends early.
type Dispatcher interface {
	Dispatch(ctx context.Context, path string, body []byte) (status int, answer []byte)
}

// DispatcherFunc is a function as a Dispatcher.
type DispatcherFunc func(ctx context.Context, path string, body []byte) (status int, answer []byte)

// Dispatch calls f.
func (f DispatcherFunc) Dispatch(ctx context.Context, path string, body []byte) (int, []byte) {
	return f(ctx, path, body)
}

// Options are a stream's limits. The zero value takes the documented defaults.
type Options struct {
	// InFlight bounds the records of one stream read and not yet answered (default 16): when the
	// caller stops reading answers, the engine stops reading its body once this many wait.
	InFlight int
	// Workers is how many records of one stream are dispatched at once (default the smaller of
	// GOMAXPROCS and InFlight).
	Workers int
	// Idle ends a stream whose body sends nothing, or whose caller takes no answer, for this
	// long (default 60 s).
	Idle time.Duration
	// MaxLine is the longest line accepted, in bytes without its newline (default 1 MiB).
	MaxLine int
	// MaxHeld bounds the bytes of records and answers held between the body and the caller
	// (default 32 MiB): whatever the answers' size, the engine stops reading and dispatching
	// past it (see budget).
	MaxHeld int
	// Log receives what the caller must not see: a dispatcher's panic. Default slog.Default().
	Log *slog.Logger
	// Trusted says the Dispatcher's answers are compact JSON by construction (the frame's own
	// encoder and error bodies): Serve then writes them without checking (a stray trailing
	// newline is still dropped). A panic is still a 500.
	Trusted bool
}

// Defaults of Options.
const (
	DefaultInFlight = 16
	DefaultIdle     = 60 * time.Second
	DefaultMaxLine  = 1 << 20
	DefaultMaxHeld  = 32 << 20
)

func (o Options) withDefaults() Options {
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
	}
	if o.Workers <= 0 {
		o.Workers = min(runtime.GOMAXPROCS(0), o.InFlight)
	}
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.MaxHeld <= 0 {
		o.MaxHeld = DefaultMaxHeld
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// Counts are what one stream did, for its log line and metrics.
type Counts struct {
	Lines    int  // lines read from the body, blank ones included
	Records  int  // answer lines written: records and broken lines (the summary's records)
	OK       int  // of those, answered 200
	Failed   int  // Records − OK
	Complete bool // the body ended and the summary line went out
	PeakHeld int  // the most bytes of records and answers held at once
}

// ErrIdle is the error of Serve and ServeGroup for a stream ended by the idle limit.
var ErrIdle = errIdle

// job is one line on its way from the body to the answer stream.
type job struct {
	seq    int // 0-based among the answers
	size   int // bytes held for it: the record's id and body, then its answer too
	rec    record
	line   int
	status int
	answer []byte
	broken bool          // a line that is not a record: answered by its line number
	done   chan struct{} // closed once status and answer are set
}

// Serve runs one batch stream: it writes the 200 head, reads the body's records line by line,
// dispatches them, at most o.Workers at once and o.InFlight read ahead of the answers, and
// writes one answer line per record and broken line in input order, flushing whenever the next
// answer is not ready yet, then the summary line once the body has ended. It returns when the
// stream is over, with no dispatch still running; the error says why a stream ended early (the
// context's cause, ErrIdle, the body's or the connection's error) and is nil after the summary.
//
// The frame answers 401, 403, 415 and 503 before calling Serve: Serve always answers 200.
func Serve(ctx context.Context, w http.ResponseWriter, r io.Reader, d Dispatcher, o Options) (Counts, error) {
	o = o.withDefaults()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := newConn(w, o.Idle)
	var counts Counts
	if !c.deadlines {
		rpcerr.WriteStatus(w, http.StatusInternalServerError)
		return counts, ErrNoDeadlines
	}
	defer func() { c.release(counts.Complete) }()
	defer c.stopOn(ctx)()

	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold the answers back
	w.WriteHeader(http.StatusOK)
	out := newOutput(w, c)

	// The head goes out at once: the caller learns it was admitted before it sends a record.
	if err := out.flush(); err != nil {
		return counts, err
	}

	slots := make(chan struct{}, o.InFlight) // one per line read and not yet answered
	jobs := make(chan *job, o.InFlight)      // to the writer, in input order
	work := make(chan *job, o.InFlight)      // to the workers
	held, stopBudget := newBudget(ctx, int64(o.MaxHeld))
	defer stopBudget()
	var wg sync.WaitGroup
	var readErr error
	var lines atomic.Int64

	wg.Go(func() {
		defer close(jobs)
		defer close(work)
		readErr = read(ctx, &body{ctx: ctx, r: r, c: c}, o.MaxLine, slots, held, jobs, work, &lines)
		if readErr != nil {
			// The connection broke (the caller is gone) or the body was idle: either way
			// net/http has cancelled the request, and the stream ends here, without a summary.
			cancel(readErr)
		}
	})
	for range o.Workers {
		wg.Go(func() {
			for j := range work {
				if held.wait(j.seq) {
					j.status, j.answer = dispatch(ctx, d, j.rec, o.Log, o.Trusted)
					j.size += len(j.answer)
					held.add(len(j.answer))
				} else {
					j.status, j.answer = http.StatusServiceUnavailable, nil // never written
				}
				close(j.done)
			}
		})
	}

	writeErr := func() error {
		var buf []byte
		for {
			var j *job
			select {
			case j = <-jobs:
			default:
				// Nothing is ready: what was written goes to the caller before waiting.
				if err := out.flush(); err != nil {
					return err
				}
				j = <-jobs
			}
			if j == nil {
				return nil
			}
			select {
			case <-j.done:
			default:
				if err := out.flush(); err != nil {
					return err
				}
				select {
				case <-j.done:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if j.broken {
				buf = appendLineAnswer(buf[:0], j.line, j.status, j.answer)
			} else {
				buf = appendRecordAnswer(buf[:0], j.rec.id, j.status, j.answer)
			}
			if err := out.write(buf); err != nil {
				return err
			}
			counts.Records++
			if j.status == http.StatusOK {
				counts.OK++
			}
			held.written(j.size)
			<-slots
		}
	}()
	if writeErr != nil {
		cancel(writeErr)
	}
	wg.Wait() // the reader and every dispatch have returned
	counts.Lines = int(lines.Load())
	counts.Failed = counts.Records - counts.OK
	counts.PeakHeld = int(held.peak)
	switch {
	case errors.Is(readErr, errIdle):
		// The idle body came first; the request's context, which net/http cancels on the
		// deadline, may have reached the writer before the reader's own cancel did.
		return counts, readErr
	case writeErr != nil:
		return counts, writeErr
	case readErr != nil:
		return counts, readErr
	}
	summary := fmt.Appendf(nil, `{"summary":{"records":%d,"ok":%d,"failed":%d}}`+"\n", counts.Records, counts.OK, counts.Failed)
	if err := out.write(summary); err != nil {
		return counts, err
	}
	if err := out.flush(); err != nil {
		return counts, err
	}
	counts.Complete = true
	return counts, nil
}

// read turns the body's lines into jobs until the body ends (nil) or fails. It takes a slot
// and waits for the byte budget before reading each line, so that no more than InFlight lines
// are ever held, nor more bytes than the budget allows.
func read(ctx context.Context, b io.Reader, max int, slots chan struct{}, held *budget, jobs, work chan<- *job, lines *atomic.Int64) error {
	lr := newLineReader(b, max)
	tooLarge := lineTooLarge(max)
	for seq := 0; ; seq++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if !held.wait(seq) {
			return context.Cause(ctx)
		}
		var line []byte
		var num int
		var tooLong bool
		for {
			var err error
			line, num, tooLong, err = lr.next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				return err
			}
			lines.Store(int64(num))
			if tooLong || !blank(line) {
				break
			}
		}
		if err := quota.Pace(ctx); err != nil { // the client's rate: a record waits, never refused
			return err
		}
		j := &job{seq: seq, line: num, done: make(chan struct{})}
		if tooLong {
			j.broken, j.status, j.answer = true, http.StatusRequestEntityTooLarge, tooLarge
		} else if rec, err := parseRecord(line); err != nil {
			j.broken = true
			j.status, j.answer = ErrorAnswer(err)
			j.size = len(j.answer)
		} else {
			j.rec = rec
			j.size = len(rec.id) + len(rec.body)
		}
		held.add(j.size)
		jobs <- j // never blocks: a slot was taken
		if j.broken {
			close(j.done)
		} else {
			work <- j
		}
	}
}

// dispatch answers one record, turning a panic into the documented 500: one bad record must not
// take the process (and every other stream) down with it.
func dispatch(ctx context.Context, d Dispatcher, rec record, log *slog.Logger, trusted bool) (status int, answer []byte) {
	defer func() {
		if v := recover(); v != nil {
			log.ErrorContext(ctx, "batch: dispatcher panicked", "path", rec.path, "panic", v)
			status, answer = http.StatusInternalServerError, internalBody
		}
	}()
	status, answer = d.Dispatch(ctx, rec.path, rec.body)
	if trusted {
		return status, bytes.TrimRight(answer, "\n")
	}
	return checkAnswer(status, answer)
}
