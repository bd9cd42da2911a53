package batch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// DispatcherFunc answers one record exactly as the unary path would answer its request. ctx is
// the stream's: it carries the caller's identity and is cancelled when the stream ends early.
type DispatcherFunc func(ctx context.Context, path string, body []byte) (status int, answer []byte)

// Options are a stream's limits. The zero value takes the documented defaults.
type Options struct {
	InFlight int           // records read and not yet answered, at most (default 16)
	Workers  int           // records dispatched at once (default min(GOMAXPROCS, InFlight))
	Idle     time.Duration // a body sending nothing, or a caller taking nothing, this long ends it (60 s)
	MaxLine  int           // the longest line, in bytes without its newline (default 1 MiB)
	MaxHeld  int           // the most bytes of records and answers held (default 32 MiB)
	Log      *slog.Logger  // what the caller must not see: a dispatcher's panic (default slog.Default())
	// Revoked ends the stream with the first error it yields: the records read are answered, then
	// the {"end":…} line (before the head, that answer is the whole response).
	Revoked <-chan error
	// Hold, when set, takes a record's bytes from the memory budget once its line is read, until
	// its answer is written (done). It may wait; its error ends the stream as the context's does.
	Hold func(ctx context.Context, n int64) (done func(), err error)
	// Trusted says the dispatcher's answers are compact JSON by construction: Serve writes them
	// unchecked (a trailing newline is still dropped). A panic is still a 500.
	Trusted bool
}

// Defaults of Options.
const (
	DefaultInFlight = 16
	DefaultIdle     = 60 * time.Second
	DefaultMaxLine  = 1 << 20
	DefaultMaxHeld  = 32 << 20
)

// withDefaults gives every field not above zero its default.
func (o Options) withDefaults() Options {
	o.InFlight = cmp.Or(max(o.InFlight, 0), DefaultInFlight)
	o.Workers = cmp.Or(max(o.Workers, 0), min(runtime.GOMAXPROCS(0), o.InFlight))
	o.Idle = cmp.Or(max(o.Idle, 0), DefaultIdle)
	o.MaxLine = cmp.Or(max(o.MaxLine, 0), DefaultMaxLine)
	o.MaxHeld = cmp.Or(max(o.MaxHeld, 0), DefaultMaxHeld)
	o.Log = cmp.Or(o.Log, slog.Default())
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

// job is one line on its way from the body to the answer stream.
type job struct {
	size   int // bytes held for it before its answer: the record's id and body, or a broken line's answer
	rec    Record
	line   int
	status int
	answer []byte
	broken bool   // a line that is not a record: answered by its line number
	done   func() // gives back the record's bytes (Options.Hold); nil: none held
}

// Serve runs one batch stream as the package doc says; the error says why it ended early.
func Serve(parent context.Context, w http.ResponseWriter, r io.Reader, d DispatcherFunc, o Options) (Counts, error) {
	o = o.withDefaults()
	c := newConn(w, o.Idle)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	defer c.detach(parent, cancel)()
	var counts Counts
	if !c.deadlines {
		rpcerr.WriteStatus(w, http.StatusInternalServerError)
		return counts, ErrNoDeadlines
	}
	defer func() { c.release(counts.Complete) }()
	defer c.stopOn(ctx)()
	defer c.endReadsOn(ctx, o.Revoked)()
	if err := c.head(); err != nil {
		return counts, err
	}

	lr := NewLineReader(&body{ctx: ctx, r: r, c: c}, o.MaxLine)
	tooLarge := lineTooLarge(o.MaxLine)
	var readErr error
	var buf []byte
	records, peak, err := pipeline[*job, *job]{
		recv: func() (*job, error) {
			j, err := readJob(ctx, lr, tooLarge, &counts.Lines)
			if _, ok := errors.AsType[*endedError](err); ok {
				// The records read are answered, then the stream's last line says why it ended.
				readErr = err
				return j, err
			}
			if err == nil && o.Hold != nil && !j.broken {
				j.done, err = o.Hold(ctx, int64(j.size))
			}
			if err != nil && !errors.Is(err, io.EOF) {
				// The caller is gone or the body was idle: the stream ends without a summary.
				readErr = err
				cancel(err)
				return nil, err
			}
			return j, err
		},
		weigh: func(j *job) int { return j.size },
		answer: func(ctx context.Context, j *job) (*job, int) {
			if j.broken {
				return j, 0
			}
			j.status, j.answer = dispatch(ctx, d, j.rec, o.Log, o.Trusted)
			return j, len(j.answer)
		},
		send: func(j *job) error {
			if j.broken {
				buf = appendLineAnswer(buf[:0], j.line, j.status, j.answer)
			} else {
				buf = appendRecordAnswer(buf[:0], j.rec.ID, j.status, j.answer)
			}
			err := c.write(buf)
			if j.done != nil {
				j.done()
			}
			if err == nil && j.status == http.StatusOK {
				counts.OK++
			}
			return err
		},
		idle:     c.flush,
		fromBody: true,
	}.run(ctx, cancel, o)
	counts.Records, counts.PeakHeld = records, int(peak)
	counts.Failed = counts.Records - counts.OK
	var ended *endedError
	switch {
	case errors.Is(readErr, ErrIdle):
		// The idle body came first; the request's context, which net/http cancels on the
		// deadline, may have reached the writer before the reader's own cancel did.
		return counts, readErr
	case errors.As(err, &ended):
		return counts, c.writeEnd(ended)
	case err != nil:
		return counts, err
	}
	err = c.last(fmt.Appendf(nil, `{"summary":{"records":%d,"ok":%d,"failed":%d}}`+"\n", counts.Records, counts.OK, counts.Failed))
	counts.Complete = err == nil
	return counts, err
}

// last writes the stream's last line and sends it with what is buffered: nil once it went out.
func (c *conn) last(line []byte) error {
	_ = c.write(line) // an error sticks: flush returns it
	return c.flush()
}

// writeEnd writes the {"end":…} line of a stream ended early and returns the stream's error.
func (c *conn) writeEnd(ended *endedError) error {
	status, body := ErrorAnswer(ended.err)
	if err := c.last(fmt.Appendf(nil, `{"end":{"status":%d,"body":%s}}`+"\n", status, body)); err != nil {
		return err
	}
	return ended
}

// head writes a stream's 200 head and sends it at once: the caller learns it was admitted.
func (c *conn) head() error {
	h := c.w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold the answers back
	c.w.WriteHeader(http.StatusOK)
	return c.flush()
}

// readJob reads the next line that is not blank as a job, once the client's rate allows.
func readJob(ctx context.Context, lr *LineReader, tooLarge []byte, lines *int) (*job, error) {
	line, num, tooLong, err := lr.nextNonBlank()
	*lines = num
	if err != nil {
		return nil, err
	}
	if err := quota.Pace(ctx); err != nil { // the client's rate: a record waits, never refused
		return nil, err
	}
	j := &job{line: num}
	if tooLong {
		j.broken, j.status, j.answer = true, http.StatusRequestEntityTooLarge, tooLarge
	} else if rec, err := ParseRecord(line); err != nil {
		j.broken = true
		j.status, j.answer = ErrorAnswer(err)
		j.size = len(j.answer)
	} else {
		j.rec = rec
		j.size = len(rec.ID) + len(rec.Body)
	}
	return j, nil
}

// dispatch answers one record, turning a panic into the documented 500: one bad record must not
// take the process (and every other stream) down with it.
func dispatch(ctx context.Context, d DispatcherFunc, rec Record, log *slog.Logger, trusted bool) (status int, answer []byte) {
	defer func() {
		if v := recover(); v != nil {
			log.ErrorContext(ctx, "batch: dispatcher panicked", "path", rec.Path, "panic", v, "stack", string(debug.Stack()))
			status, answer = http.StatusInternalServerError, internalBody
		}
	}()
	status, answer = d(ctx, rec.Path, rec.Body)
	if trusted {
		return status, bytes.TrimRight(answer, "\n")
	}
	return checkAnswer(status, answer)
}
