package token

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func throttled(t *testing.T, err error) *ThrottledError {
	t.Helper()
	var te *ThrottledError
	if !errors.As(err, &te) {
		t.Fatalf("got %v; want *ThrottledError", err)
	}
	return te
}

func TestThrottlePerClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 3, Refill: 10 * time.Second}, PerAddress: Bucket{Burst: 100}}
	})
	for i := range 3 {
		if _, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, fmt.Sprintf("10.1.0.%d:1", i)); err != ErrNotAuthenticated {
			t.Fatalf("failure %d: got %v; want ErrNotAuthenticated", i+1, err)
		}
	}
	// Exhausted: even the right secret, from a fresh address, waits.
	_, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.1.0.9:1")
	if te := throttled(t, err); te.RetryAfter != 10*time.Second {
		t.Errorf("got RetryAfter %v; want 10s", te.RetryAfter)
	}
	// Another client is not affected.
	if _, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.1.0.9:1"); err != nil {
		t.Errorf("other client: got %v; want a token", err)
	}
	f.clock.Advance(4 * time.Second)
	_, err = f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.1.0.9:1")
	if te := throttled(t, err); te.RetryAfter != 6*time.Second {
		t.Errorf("after 4s: got RetryAfter %v; want 6s", te.RetryAfter)
	}
	f.clock.Advance(6 * time.Second)
	if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.1.0.9:1"); err != nil {
		t.Errorf("after the refill: got %v; want a token", err)
	}
}

func TestThrottlePerAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 100}, PerAddress: Bucket{Burst: 2, Refill: time.Minute}}
	})
	for i, id := range []string{"guess-1", "guess-2"} {
		if _, err := f.Authenticate(id, "x", ServiceScoring, "[2001:db8::1]:443"); err != ErrNotAuthenticated {
			t.Fatalf("failure %d: got %v; want ErrNotAuthenticated", i+1, err)
		}
	}
	// The same /64, another port and host part, bare or with brackets: one bucket.
	for _, addr := range []string{"[2001:db8::2]:80", "2001:db8::ffff", "[2001:db8::3]"} {
		_, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, addr)
		if te := throttled(t, err); te.RetryAfter != time.Minute {
			t.Errorf("%s: got RetryAfter %v; want 1m", addr, te.RetryAfter)
		}
	}
	if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "[2001:db8:0:1::1]:443"); err != nil {
		t.Errorf("another /64: got %v; want a token", err)
	}
}

func TestThrottleSuccessCostsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 2, Refill: time.Hour}, PerAddress: Bucket{Burst: 2, Refill: time.Hour}}
	})
	for i := range 10 {
		if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.2.0.1"); err != nil {
			t.Fatalf("success %d: got %v; want a token", i+1, err)
		}
	}
	if _, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, "10.2.0.1"); err != ErrNotAuthenticated {
		t.Fatalf("got %v; want ErrNotAuthenticated", err)
	}
	if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.2.0.1"); err != nil {
		t.Fatalf("got %v; want a token", err)
	}
	if _, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, "10.2.0.1"); err != ErrNotAuthenticated {
		t.Fatalf("got %v; want ErrNotAuthenticated", err)
	}
	_, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.2.0.1")
	throttled(t, err)
	// A permission denied had the right secret: it costs nothing either.
	g := newFixture(t, func(o *Options) { o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 1}} })
	for range 3 {
		if _, err := g.Authenticate("north", "north-secret", ServiceForecast, "10.2.0.2"); !errors.Is(err, ErrPermissionDenied) {
			t.Fatalf("got %v; want ErrPermissionDenied", err)
		}
	}
}

// TestThrottleConcurrentGuesses: the bucket is taken before the hash is computed, so a burst
// of simultaneous guesses gets exactly Burst tries.
func TestThrottleConcurrentGuesses(t *testing.T) {
	t.Parallel()
	const burst, guesses = 4, 40
	f := newFixture(t, func(o *Options) {
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: burst, Refill: time.Hour}, PerAddress: Bucket{Burst: 1000}}
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.Authenticate("acme-reader", fmt.Sprintf("guess-%d", i), ServiceScoring, "10.3.0.1")
			var te *ThrottledError
			kind := "other"
			switch {
			case err == ErrNotAuthenticated:
				kind = "denied"
			case errors.As(err, &te):
				kind = "throttled"
			}
			mu.Lock()
			counts[kind]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts["denied"] != burst || counts["throttled"] != guesses-burst {
		t.Errorf("got %v; want %d denied and %d throttled", counts, burst, guesses-burst)
	}
}

func TestThrottleDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 10 {
		if _, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, fmt.Sprintf("10.4.0.%d", i)); err != ErrNotAuthenticated {
			t.Fatalf("got %v; want ErrNotAuthenticated", err)
		}
	}
	_, err := f.Authenticate("acme-reader", "wrong", ServiceScoring, "10.4.1.1")
	if te := throttled(t, err); te.RetryAfter != 6*time.Second {
		t.Errorf("got RetryAfter %v; want the default 6s", te.RetryAfter)
	}
	for i := range 20 {
		if _, err := f.Authenticate(fmt.Sprintf("guess-%d", i), "wrong", ServiceScoring, "10.4.2.1"); err != ErrNotAuthenticated {
			t.Fatalf("address failure %d: got %v; want ErrNotAuthenticated", i+1, err)
		}
	}
	_, err = f.Authenticate("guess-x", "wrong", ServiceScoring, "10.4.2.1")
	if te := throttled(t, err); te.RetryAfter != 3*time.Second {
		t.Errorf("got RetryAfter %v; want the default 3s", te.RetryAfter)
	}
}

// TestThrottleMemoryBound: a flood of made-up client ids and addresses keeps at most
// MaxTracked buckets of each kind, and over-long ids are cut.
func TestThrottleMemoryBound(t *testing.T) {
	t.Parallel()
	const limit = 5
	f := newFixture(t, func(o *Options) { o.Throttle = ThrottleConfig{MaxTracked: limit} })
	long := string(make([]byte, 10000))
	for i := range 200 {
		id := fmt.Sprintf("flood-%d-%s", i, long)
		if _, err := f.Authenticate(id, "x", ServiceScoring, fmt.Sprintf("192.0.2.%d:1", i)); err != ErrNotAuthenticated {
			t.Fatalf("got %v; want ErrNotAuthenticated", err)
		}
		f.throttle.mu.Lock()
		nc, nr, lc, lr := len(f.throttle.client.index), len(f.throttle.remote.index), f.throttle.client.lru.Len(), f.throttle.remote.lru.Len()
		for k := range f.throttle.client.index {
			if len(k) > maxThrottleKey {
				t.Errorf("got a key of %d bytes; want at most %d", len(k), maxThrottleKey)
			}
		}
		f.throttle.mu.Unlock()
		if nc > limit || nr > limit || nc != lc || nr != lr {
			t.Fatalf("after %d: got %d/%d client and %d/%d address buckets; want at most %d, index and list in step", i+1, nc, lc, nr, lr, limit)
		}
	}
}

// TestBucketsEviction: full buckets are dropped (they hold no state), and beyond the cap the
// least recently used goes first.
func TestBucketsEviction(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bs := newBuckets(Bucket{Burst: 2, Refill: time.Second}, 3)
	for _, k := range []string{"a", "b", "c"} {
		bs.take(k, now)
	}
	bs.take("a", now) // a is now the most recent, and empty
	bs.take("d", now) // over the cap: b, the least recently used, goes
	if _, ok := bs.index["b"]; ok || len(bs.index) != 3 {
		t.Errorf("got keys %v; want a, c, d", keys(bs))
	}
	if w := bs.wait("a", now); w != time.Second {
		t.Errorf("a: got wait %v; want 1s", w)
	}
	later := now.Add(10 * time.Second) // c and d refill fully; a too
	bs.take("e", later)
	if len(bs.index) != 1 {
		t.Errorf("got keys %v; want only e once the others refilled", keys(bs))
	}
	bs.give("e", later)
	if len(bs.index) != 0 {
		t.Errorf("got keys %v; want none after e was given back", keys(bs))
	}
	bs.give("never-taken", later)
	if w := bs.wait("never-taken", later); w != 0 || len(bs.index) != 0 {
		t.Errorf("an untracked key: got wait %v and %d keys; want 0 and none", w, len(bs.index))
	}
	bs.take("x", later)
	if w := bs.wait("x", later.Add(-time.Hour)); w != 0 {
		t.Errorf("clock stepped back: got wait %v; want 0 (one token left, nothing refilled)", w)
	}
}

func keys(bs *buckets) []string {
	var out []string
	for k := range bs.index {
		out = append(out, k)
	}
	return out
}

func TestRemoteKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"192.0.2.7:5555", "192.0.2.7"},
		{"192.0.2.7", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:1", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"gateway.local:80", "gateway.local"},
		{"", ""},
		{string(make([]byte, 500)), string(make([]byte, maxThrottleKey))},
	}
	for _, tc := range cases {
		if got := remoteKey(tc.in); got != tc.want {
			t.Errorf("remoteKey(%.20q): got %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestThrottledError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		d    time.Duration
		secs int64
		msg  string
	}{
		{6 * time.Second, 6, "too many failed attempts; retry after 6s"},
		{5*time.Second + time.Millisecond, 6, "too many failed attempts; retry after 6s"},
		{time.Nanosecond, 1, "too many failed attempts; retry after 1s"},
	}
	for _, tc := range cases {
		e := &ThrottledError{RetryAfter: tc.d}
		if e.RetryAfterSeconds() != tc.secs || e.Error() != tc.msg {
			t.Errorf("%v: got %d, %q; want %d, %q", tc.d, e.RetryAfterSeconds(), e.Error(), tc.secs, tc.msg)
		}
	}
}
