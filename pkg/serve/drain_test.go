package serve

import (
	"errors"
	"fmt"
	"io"
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
			h := start(t, cfg)
			auth := "Bearer " + h.token("demo", "demo-secret")

			var mu sync.Mutex
			var outcomes []outcome
			var stop atomic.Bool
			var wg sync.WaitGroup
			loop := func(name string, c *http.Client) {
				wg.Go(func() {
					for !stop.Load() {
						req, _ := http.NewRequest(http.MethodPost, h.base+scorePath, strings.NewReader(`{"items":[{"id":"L1","result":1}]}`))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", auth)
						o := outcome{client: name, sent: time.Now()}
						resp, err := c.Do(req)
						if err == nil {
							_, err = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							o.status, o.closed = resp.StatusCode, resp.Close
						}
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
				if o.sent.Before(sigterm.Add(-50*time.Millisecond)) && strings.HasPrefix(o.client, "keep-alive") && o.closed {
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
	h := start(t, cfg)
	if r := h.post(scorePath, `{"items":[{"id":"L1","result":1}]}`, "Authorization", "Bearer "+h.token("demo", "demo-secret")); r.status != http.StatusOK {
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
