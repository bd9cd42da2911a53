package token

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// churn fails n times with made-up client ids from addrs addresses (10.200.x.y), the flood of
// issue 19's attack 7: 12,000 junk failures from 632 addresses.
func churn(t *testing.T, f *fixture, n, addrs int) {
	t.Helper()
	for i := range n {
		a := i % addrs
		addr := fmt.Sprintf("10.200.%d.%d:1", a/250, a%250+1)
		if _, err := f.Authenticate(fmt.Sprintf("junk-%d", i), "x", ServiceScoring, addr); err != ErrNotAuthenticated {
			t.Fatalf("junk failure %d: got %v; want ErrNotAuthenticated", i+1, err)
		}
	}
}

// guesses makes n wrong guesses at id, from addr(i), and counts those answered 429 with want.
func guesses(t *testing.T, f *fixture, id string, n int, addr func(int) string, want time.Duration) int {
	t.Helper()
	held := 0
	for i := range n {
		_, err := f.Authenticate(id, fmt.Sprintf("guess-%d", i), ServiceScoring, addr(i))
		var te *ThrottledError
		switch {
		case errors.As(err, &te):
			if te.RetryAfter != want {
				t.Errorf("guess %d: got RetryAfter %v; want %v", i+1, te.RetryAfter, want)
			}
			held++
		case err != ErrNotAuthenticated:
			t.Fatalf("guess %d: got %v; want ErrNotAuthenticated or *ThrottledError", i+1, err)
		}
	}
	return held
}

// TestThrottleChurnKeepsKnownClients is issue 19's attack 7 with the default limits: drain a
// registered client's bucket, flood the tables with 12,000 failures at made-up ids from 632
// addresses (more than MaxTracked, 10,000), then guess at the client again: every guess is
// still 429. Before, the flood evicted the drained bucket and 100 of 100 guesses were checked.
// An unregistered id's drained bucket is evicted by the same flood (its failures forgiven, as
// documented), which shows that the flood does reach past the cap.
func TestThrottleChurnKeepsKnownClients(t *testing.T) {
	t.Parallel()
	const attacker = "203.0.113.9:4000"
	fresh := func(i int) string { return fmt.Sprintf("198.18.%d.%d:1", i/250, i%250+1) }
	cases := []struct {
		name  string
		id    string
		drain func(t *testing.T, f *fixture) // leaves the id's bucket empty for guesses from addr
		addr  func(int) string
		held  int           // guesses out of 100 answered 429 after the churn
		wait  time.Duration // their Retry-After
	}{
		{"client from one address (PerClient)", "acme-reader", func(t *testing.T, f *fixture) {
			if n := guesses(t, f, "acme-reader", 10, func(int) string { return attacker }, 0); n != 0 {
				t.Fatalf("drain: got %d of 10 throttled; want 0", n)
			}
		}, func(int) string { return attacker }, 100, 6 * time.Second},
		{"client from all addresses (PerClientGlobal)", "acme-reader", func(t *testing.T, f *fixture) {
			if n := guesses(t, f, "acme-reader", 200, func(i int) string { return fresh(i / 10) }, 0); n != 0 {
				t.Fatalf("drain: got %d of 200 throttled; want 0", n)
			}
		}, func(i int) string { return fresh(1000 + i) }, 100, time.Second},
		{"unregistered id from one address: forgiven", "nobody", func(t *testing.T, f *fixture) {
			if n := guesses(t, f, "nobody", 10, func(int) string { return attacker }, 0); n != 0 {
				t.Fatalf("drain: got %d of 10 throttled; want 0", n)
			}
		}, func(int) string { return attacker }, 90, 6 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tc.drain(t, f)
			if _, err := f.Authenticate(tc.id, "one more", ServiceScoring, tc.addr(0)); err == ErrNotAuthenticated {
				t.Fatal("before the churn: got ErrNotAuthenticated; want the bucket drained")
			}
			churn(t, f, 12000, 632)
			if got := guesses(t, f, tc.id, 100, tc.addr, tc.wait); got != tc.held {
				t.Errorf("after the churn: got %d of 100 guesses throttled; want %d", got, tc.held)
			}
			f.throttle.mu.Lock()
			defer f.throttle.mu.Unlock()
			if n := len(f.throttle.client.index); n > defaultMaxTracked {
				t.Errorf("got %d buckets of unknown ids; want at most %d", n, defaultMaxTracked)
			}
		})
	}
}

// TestKnownBucketsDropRefilled: a registered client's buckets are kept only while they hold
// failures; once they have refilled, the next failure elsewhere drops them, so the table of
// known clients does not keep every client that ever failed.
func TestKnownBucketsDropRefilled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 2, Refill: time.Second}, PerClientGlobal: Bucket{Burst: 3, Refill: time.Second}}
	})
	known := func() []string {
		f.throttle.mu.Lock()
		defer f.throttle.mu.Unlock()
		var ids []string
		for e := f.throttle.known.lru.Front(); e != nil; e = e.Next() {
			ids = append(ids, e.Value.(*knownClient).id)
		}
		return ids
	}
	for _, addr := range []string{"10.9.0.1", "10.9.0.2"} {
		if _, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, addr); err != ErrNotAuthenticated {
			t.Fatalf("got %v; want ErrNotAuthenticated", err)
		}
	}
	// acme's global bucket is full again 2 s after its two failures: one second on, it is kept.
	f.clock.Advance(time.Second)
	if _, err := f.Authenticate("north", "wrong", ServiceScoring, "10.9.0.3"); err != ErrNotAuthenticated {
		t.Fatalf("got %v; want ErrNotAuthenticated", err)
	}
	if got := fmt.Sprint(known()); got != "[north acme-reader]" {
		t.Errorf("1 s on: got known clients %s; want [north acme-reader]", got)
	}
	f.clock.Advance(time.Second)
	if _, err := f.Authenticate("north", "wrong", ServiceScoring, "10.9.0.3"); err != ErrNotAuthenticated {
		t.Fatalf("got %v; want ErrNotAuthenticated", err)
	}
	if got := fmt.Sprint(known()); got != "[north]" {
		t.Errorf("2 s on: got known clients %s; want [north]", got)
	}
}
