package serve

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestShutdownAcrossTheClose sends on new connections across the moment the HTTP listener
// closes, again and again: a connection the kernel accepted is answered (200 with Connection:
// close); one refused (ECONNREFUSED) never sent its request. A connection reset after it
// connected is a request lost: the accept queue's window at the close, which one SIGTERM run in
// three hit under 200 requests/s (3 of 703 lost). Before the drain closed it, every run of this
// test lost 4 to 8 connections. What remains of it (two handshakes completing in the instant
// between the queue's shrinking and its filling, about one loopback round trip) was measured at
// about 1 round in 48 with 12 senders hammering the close: so one loss in a run is let pass, and
// a second fails it (by chance about 1 run in 140; every run before the fix).
const maxLostAcrossTheClose = 1

func TestShutdownAcrossTheClose(t *testing.T) {
	t.Parallel()
	const rounds, senders = 6, 12
	var answered, refused atomic.Int64
	lostTotal := 0
	for round := range rounds {
		cfg := testConfig(t)
		cfg.ShutdownDelay = 0
		h := startTest(t, cfg)
		auth := "Bearer " + h.token("demo", "demo-secret")
		body := `{"text":"L1"}`
		req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			throwawayPath, auth, len(body), body)
		addr := h.base[len("http://"):]
		var stop atomic.Bool
		var wg sync.WaitGroup
		var mu sync.Mutex
		var lost []string
		for s := range senders {
			wg.Go(func() {
				for !stop.Load() {
					c, err := net.DialTimeout("tcp", addr, 5*time.Second)
					if err != nil {
						// Refused, or reset while connecting: the request was never sent.
						if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
							mu.Lock()
							lost = append(lost, fmt.Sprintf("sender %d: dial: %v", s, err))
							mu.Unlock()
						}
						refused.Add(1)
						time.Sleep(time.Millisecond)
						continue
					}
					err = askOnce(c, req)
					c.Close()
					if err != nil {
						mu.Lock()
						lost = append(lost, fmt.Sprintf("sender %d: %v", s, err))
						mu.Unlock()
						continue
					}
					answered.Add(1)
				}
			})
		}
		time.Sleep(150 * time.Millisecond)
		h.cancel()
		select {
		case <-h.stopped:
			h.stopped <- nil // for Cleanup's stop
		case <-time.After(10 * time.Second):
			t.Fatal("server did not stop")
		}
		time.Sleep(20 * time.Millisecond) // the senders meet the closed port
		stop.Store(true)
		wg.Wait()
		for _, l := range lost {
			t.Logf("round %d: a connection the server accepted got no answer: %s", round+1, l)
		}
		lostTotal += len(lost)
	}
	if lostTotal > maxLostAcrossTheClose {
		t.Errorf("%d connections the server accepted got no answer over %d rounds; want at most %d (the residual window)", lostTotal, rounds, maxLostAcrossTheClose)
	}
	t.Logf("%d rounds: %d answered, %d refused", rounds, answered.Load(), refused.Load())
	if answered.Load() < rounds*50 {
		t.Errorf("answered: got %d; want at least %d (the senders must be busy across the close)", answered.Load(), rounds*50)
	}
}
