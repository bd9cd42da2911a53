package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// outcome is one request of the shutdown test.
type outcome struct {
	client string
	sent   time.Time
	got    time.Time // the answer's arrival
	status int
	closed bool // the answer said Connection: close
	err    error
}

// TestShutdownLosesNoRequest counts every request of keep-alive clients and of clients that dial
// a new connection each time, posting in a loop across SIGTERM: every request sent before
// readiness went false plus the drain delay is answered 200; during the drain every answer says
// Connection: close. Connections refused once the listener has closed do not count.
func TestShutdownLosesNoRequest(t *testing.T) {
	t.Parallel()
	for _, delay := range []time.Duration{400 * time.Millisecond, 0} {
		t.Run(fmt.Sprintf("delay=%s", delay), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.ShutdownDelay = delay
			h := startTest(t, cfg)
			auth := "Bearer " + h.token("demo", "demo-secret")

			var mu sync.Mutex
			var outcomes []outcome
			var stop atomic.Bool
			var wg sync.WaitGroup
			loop := func(name string, c *http.Client) {
				wg.Go(func() {
					for !stop.Load() {
						req, _ := http.NewRequest(http.MethodPost, h.base+throwawayPath, strings.NewReader(`{"text":"L1"}`))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", auth)
						o := outcome{client: name, sent: time.Now()}
						resp, err := c.Do(req)
						if err == nil {
							_, err = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							o.status, o.closed = resp.StatusCode, resp.Close
						}
						o.got = time.Now()
						o.err = err
						mu.Lock()
						outcomes = append(outcomes, o)
						mu.Unlock()
						if err != nil {
							time.Sleep(2 * time.Millisecond) // refused: the listener is gone
						}
					}
				})
			}
			for i := range 4 {
				loop(fmt.Sprintf("keep-alive-%d", i), &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}})
				loop(fmt.Sprintf("new-connection-%d", i), &http.Client{Transport: &http.Transport{DisableKeepAlives: true}})
			}

			time.Sleep(300 * time.Millisecond)
			sigterm := time.Now()
			h.cancel()
			cutoff := sigterm.Add(delay)
			var serveErr error
			select {
			case serveErr = <-h.stopped:
				h.stopped <- nil // for Cleanup's stop
			case <-time.After(10 * time.Second):
				t.Fatal("server did not stop")
			}
			stop.Store(true)
			wg.Wait()
			if serveErr != nil {
				t.Errorf("Serve: %v", serveErr)
			}

			var before, during, duringNewConn int
			for _, o := range outcomes {
				refused := errors.Is(o.err, syscall.ECONNREFUSED)
				if !o.sent.Before(cutoff) || refused {
					continue
				}
				before++
				if o.err != nil || o.status != http.StatusOK {
					t.Errorf("%s, sent %s after SIGTERM: got %d %v; want 200", o.client, o.sent.Sub(sigterm), o.status, o.err)
					continue
				}
				// The drain begins a moment after the signal; from 50 ms on, every answer closes.
				if delay > 0 && o.sent.After(sigterm.Add(50*time.Millisecond)) {
					during++
					if strings.HasPrefix(o.client, "new-connection") {
						duringNewConn++
					}
					if !o.closed {
						t.Errorf("%s, sent %s after SIGTERM: got a keep-alive answer; want Connection: close", o.client, o.sent.Sub(sigterm))
					}
				}
				// Answered before the signal: the drain cannot have begun (the time a request was
				// sent says nothing of when it was handled on a loaded machine).
				if o.got.Before(sigterm) && strings.HasPrefix(o.client, "keep-alive") && o.closed {
					t.Errorf("%s before SIGTERM: got Connection: close; want keep-alive", o.client)
				}
			}
			t.Logf("%d requests sent before the cut-off (%d during the drain, %d of them on new connections), %d in all", before, during, duringNewConn, len(outcomes))
			if before < 50 {
				t.Errorf("requests before the cut-off: got %d; want at least 50", before)
			}
			if delay > 0 && duringNewConn == 0 {
				t.Errorf("requests on connections opened during the drain: got 0; want some")
			}
		})
	}
}

// TestShutdownIsQuiet: a drain with nothing going wrong logs no warning or error (every
// shutdown used to warn "http shutdown incomplete": the listener was closed twice).
func TestShutdownIsQuiet(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ShutdownDelay = 0
	h := startTest(t, cfg)
	if r := h.post(throwawayPath, `{"text":"L1"}`, "Authorization", "Bearer "+h.token("demo", "demo-secret")); r.status != http.StatusOK {
		t.Fatalf("score: got %d; want 200", r.status)
	}
	h.stop()
	h.stopped <- nil // for Cleanup's stop
	logs := h.logs.String()
	_, after, found := strings.Cut(logs, `"shutting down`)
	if !found || !strings.Contains(after, `"msg":"stopped"`) {
		t.Fatalf("logs: got no shutdown from start to stopped:\n%s", logs)
	}
	for _, line := range strings.Split(after, "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("shutdown logged %s; want only information", line)
		}
	}
}

// TestShutdownAnswersConnectionsOpenedDuringDrain is issue 19's attack 10: connections opened
// during the drain delay whose first request comes 0.1 s after the listener closed. net/http
// drops a request it reads once Shutdown has begun (the client sees EOF), so the drain holds
// Shutdown until such connections have been answered once: each gets its answer, with
// Connection: close. A connection that sends nothing is closed at the bound, and a drain whose
// connections all spoke does not wait for the bound.
func TestShutdownAnswersConnectionsOpenedDuringDrain(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		silent int // connections opened during the drain that never send a request
	}{
		{"all speak", 0},
		{"one silent", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.ShutdownDelay = delay
			h := startTest(t, cfg)
			auth := "Bearer " + h.token("demo", "demo-secret")
			addr := strings.TrimPrefix(h.base, "http://")

			h.cancel() // SIGTERM
			sigterm := time.Now()
			time.Sleep(delay / 3)
			var conns, silent []net.Conn
			for i := range 10 + tc.silent {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("dial during the drain delay: %v", err)
				}
				defer c.Close()
				if i < 10 {
					conns = append(conns, c)
				} else {
					silent = append(silent, c)
				}
			}
			closed := waitListenerClosed(t, addr)
			time.Sleep(100 * time.Millisecond)

			body := `{"text":"L1"}`
			req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", throwawayPath, auth, len(body), body)
			var wg sync.WaitGroup
			errs := make([]error, len(conns))
			for i, c := range conns {
				wg.Go(func() { errs[i] = askOnce(c, req) })
			}
			wg.Wait()
			var eof int
			for i, err := range errs {
				if err != nil {
					eof++
					t.Errorf("connection %d, request sent 0.1 s after the listener closed (%s after SIGTERM): %v", i, closed.Sub(sigterm), err)
				}
			}
			if eof != 0 {
				t.Errorf("connections without an answer: got %d of %d; want 0", eof, len(conns))
			}

			for _, c := range silent {
				_ = c.SetReadDeadline(time.Now().Add(firstRequestWait + 2*time.Second))
				if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
					t.Errorf("silent connection: read got %d bytes, %v; want EOF (closed by the server at the bound)", n, err)
				}
			}
			var took time.Duration
			select {
			case <-h.stopped:
				took = time.Since(closed)
				h.stopped <- nil // for Cleanup's stop
			case <-time.After(firstRequestWait + 5*time.Second):
				t.Fatal("server did not stop")
			}
			if tc.silent == 0 && took >= firstRequestWait {
				t.Errorf("stop after the listener closed: got %s; want under the bound %s (every connection spoke)", took, firstRequestWait)
			}
			if tc.silent > 0 && took < firstRequestWait {
				t.Errorf("stop after the listener closed: got %s; want at least the bound %s (a silent connection is waited for)", took, firstRequestWait)
			}
		})
	}
}

// waitListenerClosed dials addr until the connection is refused and returns when the listener
// began to close. Each probe that connects is closed at once, as a TCP health check would. On
// Linux the drain cuts the accept queue to one place and plugs it just before the close
// (drain_linux.go): a probe's SYN is then dropped, and the kernel sends it again only a second
// later, when it is refused; the close began when the first probe that could not connect in
// probeWait was sent. The function still returns only once the listener refuses.
func waitListenerClosed(t *testing.T, addr string) time.Time {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var dropped time.Time // when the first probe whose SYN was dropped was sent
	for time.Now().Before(deadline) {
		sent := time.Now()
		c, err := net.DialTimeout("tcp", addr, probeWait)
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() {
			if dropped.IsZero() {
				dropped = sent
			}
			continue
		}
		if err != nil {
			// A probe that lands in the backlog as the socket closes is reset instead of refused;
			// either way the listener is gone (and the probe sent no request to lose).
			if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("probe: %v; want a connection, ECONNREFUSED or ECONNRESET", err)
			}
			if !dropped.IsZero() {
				return dropped
			}
			return time.Now()
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the listener did not close within 5s")
	return time.Time{}
}

// probeWait is how long waitListenerClosed's probe waits to connect: a connect on loopback takes
// microseconds; one that takes longer had its SYN dropped.
const probeWait = 100 * time.Millisecond

// askOnce sends req on c and reads one answer: it must be 200 with Connection: close.
func askOnce(c net.Conn, req string) error {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("read the body: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !resp.Close {
		return fmt.Errorf("got %d, Connection: close %v; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	return nil
}

// TestGracefulShutdown: readiness turns false at once on SIGTERM, and a request in flight is
// still answered 200 before Serve returns.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	done := make(chan response, 1)
	go func() {
		done <- h.post(throwawayPath, `{"text":"slow"}`, "Authorization", tok)
	}()
	<-h.echo.started
	h.cancel() // SIGTERM
	// Readiness turns false while the request is still in flight.
	deadline := time.Now().Add(5 * time.Second)
	for h.srv.ready.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.srv.ready.Load() {
		t.Error("still ready after shutdown began")
	}
	close(h.echo.release)
	r := <-done
	if r.status != 200 {
		t.Errorf("in-flight request during shutdown: got %d %s; want 200", r.status, r.body)
	}
	select {
	case err := <-h.stopped:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		h.stopped <- nil // for Cleanup's stop
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}
