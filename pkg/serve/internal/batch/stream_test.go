package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counting counts the answer lines that went through the response writer; Unwrap lets
// http.ResponseController reach the connection, as a frame's wrappers must.
type counting struct {
	http.ResponseWriter
	lines *atomic.Int64
}

func (c counting) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.lines.Add(int64(strings.Count(string(p[:n]), "\n")))
	return n, err
}

func (c counting) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// A caller that sends 200,000 records and reads nothing: the engine holds at most InFlight of
// them, stops reading the body (so the caller's writes block), keeps its heap bounded, and
// stops within a second of the caller closing. Not parallel: it measures the heap.
func TestCallerThatDoesNotRead(t *testing.T) {
	const inFlight, records, answerSize = 8, 200_000, 10_000
	var written, maxHeld atomic.Int64
	f := &fake{}
	d := DispatcherFunc(func(ctx context.Context, path string, body []byte) (int, []byte) {
		// Records dispatched and not yet written out: at most the slots, plus the few answers
		// in the 32 KiB write buffer.
		held := f.calls.Load() + 1 - written.Load()
		for m := maxHeld.Load(); held > m && !maxHeld.CompareAndSwap(m, held); m = maxHeld.Load() {
		}
		return f.Dispatch(ctx, path, body)
	})
	done := make(chan result, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		c, err := Serve(r.Context(), counting{w, &written}, r.Body, d, Options{InFlight: inFlight, Workers: 4})
		done <- result{c, err}
	})

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var sent atomic.Int64
	go func() {
		line := rec(`"r"`, "/big", fmt.Sprintf(`{"n": %d, "pad": %q}`, answerSize, strings.Repeat("p", 1000)))
		for range records {
			if _, err := io.WriteString(pw, line); err != nil {
				return
			}
			sent.Add(1)
		}
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	// Wait until nothing moves any more: the socket buffers are full both ways.
	last := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		n := sent.Load() + f.calls.Load()
		if n == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still moving after 30 s: %d sent, %d dispatched", sent.Load(), f.calls.Load())
		}
		last = n
	}
	runtime.GC()
	var stalled runtime.MemStats
	runtime.ReadMemStats(&stalled)
	growth := int64(stalled.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("stalled: %d of %d records sent, %d dispatched, %d answers written, at most %d held, heap %+d KiB",
		sent.Load(), records, f.calls.Load(), written.Load(), maxHeld.Load(), growth>>10)
	if sent.Load() >= records/2 {
		t.Errorf("the caller sent %d records without reading an answer: the engine kept reading", sent.Load())
	}
	if m := maxHeld.Load(); m > inFlight+32<<10/answerSize+1 {
		t.Errorf("%d records held between the body and the connection; want at most %d", m, inFlight+32<<10/answerSize+1)
	}
	if growth > 64<<20 {
		t.Errorf("heap grew by %d MiB while the caller did not read; want < 64 MiB", growth>>20)
	}

	cancel() // the caller goes away
	res := wait(t, done, time.Second, "Serve returning after the caller left")
	if res.err == nil || res.counts.Complete {
		t.Errorf("Serve = %+v, %v; want an incomplete stream and its error", res.counts, res.err)
	}
	calls := f.calls.Load()
	time.Sleep(100 * time.Millisecond)
	if f.calls.Load() != calls || f.running.Load() != 0 {
		t.Errorf("dispatching went on after Serve returned: %d calls, then %d, %d running", calls, f.calls.Load(), f.running.Load())
	}
}

func newServer(t *testing.T, h http.HandlerFunc) *httptestServer {
	t.Helper()
	srv := newHTTPTest(h)
	t.Cleanup(srv.Close)
	return srv
}

// A caller that goes away mid-stream: the dispatches in progress see their context cancelled,
// nothing more is dispatched, and Serve returns.
func TestCallerGoesAway(t *testing.T) {
	t.Parallel()
	f := &fake{started: make(chan struct{}, 8)}
	srv, done := server(t, f.Dispatch, Options{Workers: 3, InFlight: 16})
	d := openDuplex(t, srv.URL)
	d.send(t, rec(`"a"`, "/echo", `{}`))
	if a := decode(t, d.next(t)); string(a.ID) != `"a"` {
		t.Fatalf("first answer %+v", a)
	}
	for range 3 {
		d.send(t, rec(`"b"`, "/block", `{}`))
	}
	for range 3 {
		wait(t, f.started, 5*time.Second, "a blocking dispatch to start")
	}
	d.cancel()
	res := wait(t, done, time.Second, "Serve returning after the caller left")
	if res.err == nil || res.counts.Complete || res.counts.Records != 1 {
		t.Errorf("Serve = %+v, %v; want 1 answer, incomplete, an error", res.counts, res.err)
	}
	if f.cancelled.Load() != 3 || f.running.Load() != 0 || f.calls.Load() != 4 {
		t.Errorf("%d of 3 blocked dispatches cancelled, %d running, %d calls; want 3, 0, 4", f.cancelled.Load(), f.running.Load(), f.calls.Load())
	}
}

// A body that sends nothing for the idle limit ends the stream: the records read are answered,
// and no summary says it is cut short. A body that keeps sending within the limit is not ended.
func TestIdleBody(t *testing.T) {
	t.Parallel()
	const idle = 500 * time.Millisecond
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		srv, done := server(t, (&fake{}).Dispatch, Options{Idle: idle})
		d := openDuplex(t, srv.URL)
		d.send(t, rec(`"a"`, "/echo", `{}`))
		if a := decode(t, d.next(t)); string(a.ID) != `"a"` {
			t.Fatalf("answer %+v", a)
		}
		rest, err := io.ReadAll(d.lines) // the server ends the answer; the body stays open
		if len(rest) != 0 || err != nil {
			t.Errorf("after the idle limit: %q, %v; want the end of the answer, no summary", rest, err)
		}
		res := wait(t, done, 5*time.Second, "Serve")
		if !errors.Is(res.err, ErrIdle) || res.counts.Complete || res.counts.Records != 1 {
			t.Errorf("Serve = %+v, %v; want ErrIdle after 1 answer", res.counts, res.err)
		}
	})
	t.Run("slow but within the limit", func(t *testing.T) {
		t.Parallel()
		srv, done := server(t, (&fake{}).Dispatch, Options{Idle: idle})
		d := openDuplex(t, srv.URL)
		for range 4 {
			d.send(t, rec(`"a"`, "/echo", `{}`))
			time.Sleep(idle / 5)
		}
		d.body.Close()
		var got []string
		for {
			line, err := d.lines.ReadString('\n')
			if err != nil {
				break
			}
			got = append(got, line)
		}
		if len(got) != 5 || got[4] != `{"summary":{"records":4,"ok":4,"failed":0}}`+"\n" {
			t.Errorf("answers %q; want 4 and the summary", got)
		}
		if res := wait(t, done, 5*time.Second, "Serve"); res.err != nil || !res.counts.Complete {
			t.Errorf("Serve = %+v, %v", res.counts, res.err)
		}
	})
}

// Answers of any size: past MaxHeld bytes of records and answers held, the engine neither reads
// nor dispatches (but for the oldest record), so a caller that reads nothing holds a bounded
// amount of memory even when each answer is large.
func TestBigAnswersBounded(t *testing.T) {
	t.Parallel()
	const maxHeld, answer, workers = 4 << 20, 1 << 20, 2
	f := &fake{}
	done := make(chan result, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		c, err := Serve(r.Context(), w, r.Body, f.Dispatch, Options{MaxHeld: maxHeld, Workers: workers, InFlight: 64})
		done <- result{c, err}
	})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		for range 1000 {
			if _, err := io.WriteString(pw, rec(`"r"`, "/big", fmt.Sprintf(`{"n": %d}`, answer))); err != nil {
				return
			}
		}
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	last := int64(-1)
	for n := f.calls.Load(); n != last; n = f.calls.Load() {
		last = n
		time.Sleep(300 * time.Millisecond)
	}
	cancel()
	res := wait(t, done, 5*time.Second, "Serve")
	// Without the budget the 64 slots would hold 64 answers of 1 MiB.
	if limit := maxHeld + DefaultMaxLine + workers*(answer+64); res.counts.PeakHeld > limit {
		t.Errorf("%d bytes held at the peak; want at most %d", res.counts.PeakHeld, limit)
	}
	t.Logf("%d dispatched, peak %d KiB held", f.calls.Load(), res.counts.PeakHeld>>10)
}

// A complete stream leaves its HTTP/1 connection fit for the next request, made after the idle
// limit has passed (the engine's deadlines must not outlive its stream; net/http also resets
// them as it reads the next request, so this guards the pair of them).
func TestConnectionReusable(t *testing.T) {
	t.Parallel()
	const idle = 100 * time.Millisecond
	srv, _ := server(t, (&fake{}).Dispatch, Options{Idle: idle})
	client := srv.Client()
	reused := 0
	for i := range 2 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, srv.URL, strings.NewReader(rec(`"a"`, "/echo", `{}`)))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.HasSuffix(string(b), `{"summary":{"records":1,"ok":1,"failed":0}}`+"\n") {
			t.Fatalf("request %d: %q, %v", i, b, err)
		}
		time.Sleep(3 * idle)
	}
	if reused != 1 {
		t.Errorf("the second request did not reuse the connection (reused %d); the test proves nothing", reused)
	}
}

// A frame wrapper that hides the connection is a wiring fault: 500 and ErrNoDeadlines, at once,
// rather than a stream that nothing can end.
func TestWriterWithoutDeadlines(t *testing.T) {
	t.Parallel()
	type opaque struct{ http.ResponseWriter } // no Unwrap
	done := make(chan error, 2)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var err error
		if r.URL.Path == "/group" {
			_, err = ServeGroup(r.Context(), opaque{w}, r.Body, nil, Options{})
		} else {
			_, err = Serve(r.Context(), opaque{w}, r.Body, (&fake{}).Dispatch, Options{})
		}
		done <- err
	})
	for _, path := range []string{"/", "/group"} {
		resp, err := http.Post(srv.URL+path, "application/x-ndjson", strings.NewReader(rec(`"a"`, "/echo", `{}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if err := <-done; resp.StatusCode != 500 || !errors.Is(err, ErrNoDeadlines) {
			t.Errorf("%s: %d, %v; want 500 and ErrNoDeadlines", path, resp.StatusCode, err)
		}
	}
}
