package token

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestGateBound: however many callers arrive, at most n are inside at once, and n are reached.
func TestGateBound(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			g := newGate(n, time.Minute)
			var wg sync.WaitGroup
			for range 40 {
				wg.Go(func() {
					if !g.enter() {
						t.Error("enter: got busy; want a slot within a minute")
						return
					}
					time.Sleep(2 * time.Millisecond)
					g.leave()
				})
			}
			wg.Wait()
			if got := g.peak.Load(); got != int32(n) {
				t.Errorf("got peak %d inside; want exactly the bound %d", got, n)
			}
			if got := g.running.Load(); got != 0 {
				t.Errorf("got %d still inside; want 0", got)
			}
		})
	}
}

// TestGateQueueDeadline: a caller that finds every slot taken waits HashQueueWait and is then
// answered busy; a slot freed within the wait is taken.
func TestGateQueueDeadline(t *testing.T) {
	t.Parallel()
	g := newGate(1, 30*time.Millisecond)
	if !g.enter() {
		t.Fatal("first enter: got busy; want the free slot")
	}
	start := time.Now()
	if g.enter() {
		t.Fatal("second enter: got a slot; want busy")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("busy after %v; want after the 30ms queue wait", waited)
	}
	// A slot freed within the wait is taken. The wait is long here so that a loaded machine (the
	// race detector, parallel packages) cannot make the freeing goroutine miss it: a 30 ms wait
	// once did in CI.
	long := newGate(1, 10*time.Second)
	if !long.enter() {
		t.Fatal("first enter: got busy; want the free slot")
	}
	go func() { time.Sleep(5 * time.Millisecond); long.leave() }()
	if !long.enter() {
		t.Error("enter while the slot frees within the wait: got busy; want the slot")
	}
}

// TestAuthenticateBusy: an argon2 check that finds no slot within the queue wait answers
// *BusyError (ErrBusy, Retry-After 1s) and counts no failure; a fast-hash client and an unknown
// id never wait for a slot.
func TestAuthenticateBusy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.HashConcurrency, o.HashQueueWait = 1, 20*time.Millisecond
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 1, Refill: time.Hour}}
	})
	fastSecret, fastHash, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	addClient(t, f, "fast", fastHash)
	if !f.hashing.enter() {
		t.Fatal("could not take the only slot")
	}
	for range 2 { // twice: a busy answer is not a failure, or the second would be throttled
		_, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.4.0.1")
		var busy *BusyError
		if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) || busy.RetryAfter != time.Second || busy.RetryAfterSeconds() != 1 {
			t.Fatalf("argon2 client with every slot taken: got %v; want *BusyError matching ErrBusy, RetryAfter 1s", err)
		}
		if want := "busy: too many secrets being checked; retry after 1s"; err.Error() != want {
			t.Errorf("got message %q; want %q", err, want)
		}
	}
	if _, err := f.Authenticate("fast", fastSecret, ServiceScoring, "10.4.0.1"); err != nil {
		t.Errorf("fast-hash client with every slot taken: got %v; want a token", err)
	}
	f.hashing.leave()
	if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.4.0.1"); err != nil {
		t.Errorf("argon2 client with the slot free: got %v; want a token", err)
	}
	if f.hashing.peak.Load() != 1 {
		t.Errorf("got peak %d; want 1", f.hashing.peak.Load())
	}
}

// TestAuthenticateHashBound: many concurrent argon2 logins all succeed, with never more checks
// at once than HashConcurrency.
func TestAuthenticateHashBound(t *testing.T) {
	t.Parallel()
	const bound = 2
	f := newFixture(t, func(o *Options) { o.HashConcurrency, o.HashQueueWait = bound, time.Minute })
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, fmt.Sprintf("10.4.1.%d", i)); err != nil {
				t.Errorf("got %v; want a token", err)
			}
		})
	}
	wg.Wait()
	if got := f.hashing.peak.Load(); got < 1 || got > bound {
		t.Errorf("got peak %d checks at once; want 1 to %d", got, bound)
	}
}

func TestHashOptionsDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if got, want := cap(f.hashing.slots), defaultHashConcurrency(); got != want {
		t.Errorf("got %d slots; want %d", got, want)
	}
	if f.hashing.wait != 500*time.Millisecond || DefaultHashQueueWait != 500*time.Millisecond || BusyRetryAfter != time.Second {
		t.Errorf("got queue wait %v, default %v, retry %v; want 500ms, 500ms, 1s", f.hashing.wait, DefaultHashQueueWait, BusyRetryAfter)
	}
	for _, tc := range []struct{ procs, want int }{{1, 1}, {2, 1}, {4, 2}, {8, 4}, {64, 4}} {
		if got := min(max(tc.procs/2, 1), 4); got != tc.want {
			t.Errorf("GOMAXPROCS %d: got %d; want %d", tc.procs, got, tc.want)
		}
	}
	for _, o := range []Options{{Dev: true, HashConcurrency: -1}, {Dev: true, HashQueueWait: -time.Second}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): got nil error; want the negative option refused", o)
		}
	}
}
