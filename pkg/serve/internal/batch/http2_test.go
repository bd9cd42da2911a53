package batch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// Over HTTP/2 (full duplex by nature: EnableFullDuplex is not needed there) the answers come
// while the body is open, and the idle limit and cancellation work through the stream's own
// deadlines.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	f := &fake{started: make(chan struct{}, 4)}
	done := make(chan result, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Serve(r.Context(), w, r.Body, f.Dispatch, Options{Idle: 300 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
		done <- result{c, err}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	open := func() (*io.PipeWriter, *bufio.Reader, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("protocol %s; want HTTP/2", resp.Proto)
		}
		t.Cleanup(func() { cancel(); pw.Close(); resp.Body.Close() })
		return pw, bufio.NewReader(resp.Body), cancel
	}

	pw, answers, _ := open()
	for i := range 3 {
		_, _ = io.WriteString(pw, rec(strconv.Quote(strconv.Itoa(i)), "/echo", `{}`))
		line, err := answers.ReadString('\n')
		if err != nil || decode(t, line).Status != 200 {
			t.Fatalf("answer %d: %q, %v", i, line, err)
		}
	}
	// Then silence: the idle limit ends the stream, without a summary.
	if rest, _ := io.ReadAll(answers); len(rest) != 0 {
		t.Errorf("after the idle limit: %q; want nothing more", rest)
	}
	if res := wait(t, done, 5*time.Second, "Serve"); !errors.Is(res.err, ErrIdle) || res.counts.Records != 3 {
		t.Errorf("Serve = %+v, %v; want ErrIdle after 3", res.counts, res.err)
	}

	// A caller that goes away: the blocked dispatch is cancelled and Serve returns.
	pw, _, cancel := open()
	_, _ = io.WriteString(pw, rec(`"b"`, "/block", `{}`))
	wait(t, f.started, 5*time.Second, "the dispatch to start")
	cancel()
	if res := wait(t, done, time.Second, "Serve after the caller left"); res.err == nil || f.cancelled.Load() != 1 {
		t.Errorf("Serve = %+v, %v, %d cancelled; want an error and the dispatch cancelled", res.counts, res.err, f.cancelled.Load())
	}
}
