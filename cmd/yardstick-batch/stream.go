package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// stream sends its share of the records over one batch request at a time, reconnecting after a
// dropped connection: answers come in the order records were sent, so the records not answered
// are exactly the front of pending, and they are sent again first on the new request.
type stream struct {
	c      config
	client *http.Client
	tokens *tokens
	st     *stats
	in     chan *job // the records given to this stream, in input order

	mu      sync.Mutex
	cond    *sync.Cond // signalled when pending shrinks or the attempt ends
	pending []*job     // taken from in, not yet answered, in order
	inDone  bool       // in is closed and empty
}

func newStream(c config, client *http.Client, t *tokens, st *stats) *stream {
	s := &stream{c: c, client: client, tokens: t, st: st, in: make(chan *job, c.window)}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// statusError is a refusal of the whole stream by the service.
type statusError struct {
	status     int
	body       string
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	return fmt.Sprintf("the service answered %d %s: %s", e.status, http.StatusText(e.status), e.body)
}

// retryable says whether another attempt may succeed: a broken connection or a stream cut
// short, or the service busy or restarting; not a refusal of the request itself.
func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		switch se.status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return true
}

var errCutShort = errors.New("the answer stream ended without its summary")

func (s *stream) run(ctx context.Context) error {
	// A stream with no record opens no request.
	select {
	case j, ok := <-s.in:
		if !ok {
			return nil
		}
		s.pending = append(s.pending, j)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	fruitless, wait := 0, s.c.backoff
	refreshed := false
	for {
		answered, err := s.attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusUnauthorized && s.tokens.canRefresh() && !refreshed {
			// The token expired mid-run: get a new one, once per run of failures.
			if _, terr := s.tokens.get(ctx, s.tokens.current()); terr != nil {
				return terr
			}
			refreshed = true
			continue
		}
		if !retryable(err) {
			return err
		}
		if answered > 0 {
			fruitless, wait, refreshed = 0, s.c.backoff, false
		}
		fruitless++
		if fruitless > s.c.retries {
			return fmt.Errorf("giving up after %d attempts without an answer: %w", fruitless, err)
		}
		s.st.reconnects.Add(1)
		if errors.As(err, &se) && se.retryAfter > 0 {
			wait = se.retryAfter
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// attempt runs one request: pending records first, then new ones as the window allows, until
// in is closed, everything is answered and the summary came (nil). answered counts the answers
// received, for the retry policy.
func (s *stream) attempt(ctx context.Context) (answered int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWake := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stopWake()

	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() { sent <- s.send(ctx, pw) }()
	defer func() {
		cancel()
		pw.CloseWithError(context.Canceled)
		<-sent
	}()

	token, err := s.tokens.get(ctx, "")
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.c.url, pr)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Accept", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		se := &statusError{status: resp.StatusCode, body: string(bytes.TrimSpace(body))}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			se.retryAfter = time.Duration(secs) * time.Second
		}
		return 0, se
	}
	return s.receive(resp.Body)
}

// send writes the pending records, then new ones while fewer than window are unanswered, and
// closes the body once in is exhausted. Writes are buffered and flushed before it waits, so
// the service has every record written whenever the client is idle.
func (s *stream) send(ctx context.Context, pw *io.PipeWriter) error {
	w := bufio.NewWriterSize(pw, 32<<10)
	s.mu.Lock()
	resend := append([]*job(nil), s.pending...)
	s.mu.Unlock()
	for _, j := range resend {
		if err := writeLine(w, j.send); err != nil {
			return err
		}
	}
	s.st.sent.Add(int64(len(resend)))
	for {
		s.mu.Lock()
		full := len(s.pending) >= s.c.window
		done := s.inDone
		s.mu.Unlock()
		if done {
			if err := w.Flush(); err != nil {
				return err
			}
			return pw.Close() // the body ends: the service answers the rest and the summary
		}
		if full {
			if err := w.Flush(); err != nil {
				return err
			}
			s.mu.Lock()
			for len(s.pending) >= s.c.window && ctx.Err() == nil {
				s.cond.Wait()
			}
			s.mu.Unlock()
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			continue
		}
		var j *job
		var ok bool
		select {
		case j, ok = <-s.in:
		default:
			if err := w.Flush(); err != nil {
				return err
			}
			select {
			case j, ok = <-s.in:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		s.mu.Lock()
		if !ok {
			s.inDone = true
		} else {
			s.pending = append(s.pending, j)
		}
		s.mu.Unlock()
		if ok {
			if err := writeLine(w, j.send); err != nil {
				return err
			}
			s.st.sent.Add(1)
		}
	}
}

func writeLine(w *bufio.Writer, line []byte) error {
	if _, err := w.Write(line); err != nil {
		return err
	}
	return w.WriteByte('\n')
}

// answerLine is an answer line of the service.
type answerLine struct {
	ID      json.RawMessage `json:"id"`
	Line    *int            `json:"line"`
	Status  int             `json:"status"`
	Body    json.RawMessage `json:"body"`
	Summary *struct {
		Records, OK, Failed int
	} `json:"summary"`
	// End is the last line of a stream the service ended because its token's rights went (it
	// expired, its client was removed or lost the batch permission): the records after the
	// answered ones were not run.
	End *struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	} `json:"end"`
}

// receive gives each answer to the oldest pending record, until the summary.
func (s *stream) receive(body io.Reader) (answered int, err error) {
	r := bufio.NewReaderSize(body, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				err = errCutShort
			}
			return answered, err
		}
		if err != nil {
			return answered, errCutShort // a last line without its newline was cut
		}
		line = bytes.TrimRight(line, "\r\n")
		var a answerLine
		if err := json.Unmarshal(line, &a); err != nil {
			return answered, fmt.Errorf("an answer line is not JSON: %w", err)
		}
		if a.End != nil {
			// As a refusal of the whole request: a 401 gets a new token (when the client has
			// credentials) and the records not answered are sent again.
			return answered, &statusError{status: a.End.Status, body: string(a.End.Body)}
		}
		s.mu.Lock()
		if a.Summary != nil {
			complete := len(s.pending) == 0 && s.inDone
			s.mu.Unlock()
			if !complete {
				return answered, fmt.Errorf("the service ended the stream with records unanswered")
			}
			return answered, nil
		}
		if len(s.pending) == 0 {
			s.mu.Unlock()
			return answered, fmt.Errorf("the service answered more lines than were sent")
		}
		j := s.pending[0]
		s.pending[0] = nil
		s.pending = s.pending[1:]
		s.cond.Broadcast()
		s.mu.Unlock()

		j.status, j.body = a.Status, a.Body
		if a.ID != nil && bytes.Equal(a.ID, j.id) {
			j.raw = line
		} else {
			// A line answered by number (the engine refused what the client judged fine) or an
			// id that is not the record's: written as the record's answer, with its id.
			j.raw = fmt.Appendf(nil, `{"id":%s,"status":%d,"body":%s}`, j.id, a.Status, a.Body)
		}
		if a.Status == http.StatusOK {
			s.st.ok.Add(1)
		} else {
			s.st.failed.Add(1)
		}
		answered++
		close(j.done)
	}
}
