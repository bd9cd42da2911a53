package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// LineReader cuts a body into lines of at most max bytes, a longer one thrown away as it arrives.
type LineReader struct {
	r    *bufio.Reader
	max  int
	num  int    // 1-based number of the last line returned, blank lines counted
	line []byte // the last line, reused: valid until the next call
}

// NewLineReader reads r in lines of at most max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its "\n" or "\r\n" (which the last may lack; valid until the
// following call), its 1-based number, and whether it was longer than max (then line is nil). err
// is io.EOF at a clean end, or the body's error: a line cut by it is not returned.
func (l *LineReader) Next() (line []byte, num int, tooLong bool, err error) {
	l.line = l.line[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		end := err == nil // the chunk ends with the newline
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if !errors.Is(err, io.EOF) || (len(chunk) == 0 && len(l.line) == 0 && !tooLong) {
				return nil, l.num, false, err
			}
			end = true // a last line without its newline
		}
		// One byte over max is kept: it may be the "\r" of a "\r\n", which does not count.
		if !tooLong && len(l.line)+len(chunk) <= l.max+2 {
			l.line = append(l.line, chunk...)
		} else {
			tooLong, l.line = true, l.line[:0]
		}
		if !end {
			continue
		}
		l.num++
		if tooLong {
			return nil, l.num, true, nil
		}
		line = bytes.TrimSuffix(l.line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if l.num == 1 {
			// A byte-order mark (Excel's and .NET's "UTF-8") marks the encoding, not a record.
			line = bytes.TrimPrefix(line, bom)
		}
		if len(line) > l.max {
			return nil, l.num, true, nil
		}
		return line, l.num, false, nil
	}
}

var bom = []byte("\xEF\xBB\xBF") // the UTF-8 byte-order mark, U+FEFF

// BOMProblem is the 400 of a line that is not JSON for a byte-order mark outside a string, or nil:
// JSON's "invalid character 'ï'" says nothing to the person who exported the file.
func BOMProblem(line []byte) error {
	if !bytes.Contains(line, bom) {
		return nil
	}
	var raw json.RawMessage
	var syntax *json.SyntaxError
	if err := json.Unmarshal(line, &raw); !errors.As(err, &syntax) || syntax.Offset < 1 || !bytes.HasPrefix(line[syntax.Offset-1:], bom) {
		return nil
	}
	return rpcerr.Invalid("", "the line holds a byte-order mark (U+FEFF, bytes EF BB BF) at byte %d: only the stream's first line may start with one; remove it (files joined together carry one each)", syntax.Offset-1)
}

// Blank reports whether a line holds nothing but JSON whitespace: such a line gets no answer.
func Blank(line []byte) bool { return len(bytes.TrimLeft(line, " \t\r")) == 0 }

// nextNonBlank is Next past blank lines, which get no answer but count in the lines' numbers.
func (l *LineReader) nextNonBlank() (line []byte, num int, tooLong bool, err error) {
	for {
		if line, num, tooLong, err = l.Next(); err != nil || tooLong || !Blank(line) {
			return line, num, tooLong, err
		}
	}
}

// ErrNoDeadlines is the error (and a 500) for a ResponseWriter that does not reach its connection's
// deadlines: without them, an idle body or caller would hold the engine forever.
var ErrNoDeadlines = errors.New("batch: the ResponseWriter does not reach its connection's deadlines (wrap it with an Unwrap method)")

// ErrIdle is the error of Serve and ServeGroup for a body that sent nothing for Options.Idle.
var ErrIdle = errors.New("batch: the request body sent nothing for the idle limit")

// conn is the connection under the response writer: its deadlines and the answers, buffered.
type conn struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
	buf  *bufio.Writer
	err  error // the first write's or flush's: it sticks

	mu        sync.Mutex
	cancelled bool
	deadlines bool  // the writer supports read deadlines
	ended     error // set by endReads: why no more of the body is read (an *endedError)
	bodyDone  bool  // the body was read to its end, or ended: the caller's half-close is no departure
}

func newConn(w http.ResponseWriter, idle time.Duration) *conn {
	c := &conn{w: w, rc: http.NewResponseController(w), idle: idle}
	c.buf = bufio.NewWriterSize(deadlineWriter{c}, 32<<10)
	// Else HTTP/1 reads the whole body before the answer's first byte; HTTP/2 is full duplex.
	_ = c.rc.EnableFullDuplex()
	c.deadlines = c.rc.SetReadDeadline(time.Time{}) == nil
	return c
}

// stop unblocks any read or write in progress and keeps further ones from waiting.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled = true
	past := time.Unix(1, 0)
	_ = c.rc.SetReadDeadline(past)
	_ = c.rc.SetWriteDeadline(past)
}

// stopOn runs stop when ctx ends. The function it returns unregisters it, or waits for it if
// it already started: stop must not touch the ResponseWriter after the handler has returned.
func (c *conn) stopOn(ctx context.Context) func() {
	ran := make(chan struct{})
	unregister := context.AfterFunc(ctx, func() {
		defer close(ran)
		c.stop()
	})
	return func() {
		if !unregister() {
			<-ran
		}
	}
}

// release hands the connection back to net/http: after a complete stream, without a deadline of
// ours; after one cut short, the read deadline kept and the write deadline the idle limit from
// now: net/http ends the answer (stop's past one would cut its last chunk) without waiting forever.
func (c *conn) release(complete bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if complete {
		_ = c.rc.SetReadDeadline(time.Time{})
		_ = c.rc.SetWriteDeadline(time.Time{})
		return
	}
	_ = c.rc.SetWriteDeadline(time.Now().Add(c.idle))
}

// endReads stops the reading of the body, a read in progress included: the stream ends (endedError).
func (c *conn) endReads(why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelled || c.ended != nil {
		return
	}
	c.ended, c.bodyDone = &endedError{err: why}, true
	_ = c.rc.SetReadDeadline(time.Unix(1, 0))
}

// endReadsOn runs endReads with revoked's first error; the function returned stops it as stopOn's.
func (c *conn) endReadsOn(ctx context.Context, revoked <-chan error) func() {
	if revoked == nil {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case err := <-revoked:
			c.endReads(err)
		case <-stop:
		case <-ctx.Done():
		}
	}()
	return func() { close(stop); <-done }
}

// detach ends the engine's context with parent only while the body is still being read: net/http
// cancels a request's context when the connection's read side ends, so a caller that half-closes
// after its body (a pipe into nc, curl -T) would lose every answer. It returns the unregister.
func (c *conn) detach(parent context.Context, cancel context.CancelCauseFunc) func() bool {
	return context.AfterFunc(parent, func() {
		c.mu.Lock()
		done := c.bodyDone
		c.mu.Unlock()
		if !done {
			cancel(context.Cause(parent))
		}
	})
}

// endedError is the body's error once endReads ran: err is the stream's last answer.
type endedError struct{ err error }

func (e *endedError) Error() string { return "batch: the stream was ended: " + e.err.Error() }
func (e *endedError) Unwrap() error { return e.err }

// arm gives the read or write about to be made (set: SetReadDeadline or SetWriteDeadline) the
// idle limit; false when the stream is over. The lock orders it with stop's deadline.
func (c *conn) arm(set func(time.Time) error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelled {
		return false
	}
	_ = set(time.Now().Add(c.idle))
	return true
}

// writing runs write under the idle limit, lifted once it is done: on HTTP/2 a write deadline
// resets the stream when it passes, writing or not, which would end a stream waiting for its body.
func (c *conn) writing(write func() error) error {
	if !c.arm(c.rc.SetWriteDeadline) {
		return errStopped
	}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.cancelled {
			_ = c.rc.SetWriteDeadline(time.Time{})
		}
	}()
	return write()
}

// body is the request body with the idle limit: each read may wait idle for data, no more.
type body struct {
	ctx        context.Context
	r          io.Reader
	c          *conn
	flushFirst bool // the group engine flushes its answers before it may wait for more lines
}

func (b *body) Read(p []byte) (int, error) {
	if b.flushFirst {
		_ = b.c.flush() // an error sticks and is seen at the next write
	}
	armed := time.Now()
	if err := b.c.readEnded(); err != nil {
		return 0, err
	}
	if !b.c.arm(b.c.rc.SetReadDeadline) {
		return 0, context.Cause(b.ctx)
	}
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) { // the body was read to its end
		b.c.mu.Lock()
		b.c.bodyDone = true
		b.c.mu.Unlock()
	}
	if err != nil && n == 0 {
		if err := b.c.readEnded(); err != nil { // endReads's deadline
			return 0, err
		}
		// net/http cancels the request's context on any read error, so the context says nothing
		// of the cause: a deadline error after the idle limit is the idle limit's.
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Since(armed) >= b.c.idle {
			return 0, ErrIdle
		}
		if b.ctx.Err() != nil { // stop's deadline, or the request's end
			return 0, context.Cause(b.ctx)
		}
	}
	return n, err
}

func (c *conn) readEnded() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

type deadlineWriter struct{ c *conn }

func (d deadlineWriter) Write(p []byte) (n int, err error) {
	err = d.c.writing(func() error { n, err = d.c.w.Write(p); return err })
	return n, err
}

var errStopped = errors.New("batch: the stream was stopped")

func (c *conn) write(p []byte) error {
	if c.err == nil {
		_, c.err = c.buf.Write(p)
	}
	return c.err
}

func (c *conn) flush() error {
	if c.err == nil {
		c.err = c.buf.Flush()
	}
	if c.err == nil {
		c.err = c.writing(c.rc.Flush)
	}
	return c.err
}
