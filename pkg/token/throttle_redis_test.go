package token

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// replicas are n issuers over the same clients, sharing one clock and, when url is set, one Redis.
func replicas(t *testing.T, n int, url string, logs []*logBuffer) []*fixture {
	t.Helper()
	shared := newClock()
	out := make([]*fixture, n)
	for i := range out {
		out[i] = newFixture(t, func(o *Options) {
			o.Now, o.RedisURL = shared.Now, url
			if logs != nil {
				o.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
			}
		})
		out[i].clock = shared
		t.Cleanup(func() { _ = out[i].Close() })
	}
	return out
}

// TestRedisThreeReplicasOneBudget: an attacker spreading guesses over three replicas that
// share one Redis gets exactly the budget of one replica, with the same Retry-After; three
// replicas without Redis give three budgets.
func TestRedisThreeReplicasOneBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		id      func(i int) string
		addr    func(i int) string
		n       int
		checked int // guesses that reached the secret check against one replica
		wait    time.Duration
	}{
		{"PerClient: one client id from one address", func(int) string { return "acme-reader" },
			func(int) string { return "203.0.113.1:1" }, 60, 10, 6 * time.Second},
		{"PerAddress: made-up ids from one address", func(i int) string { return fmt.Sprintf("guess-%d", i) },
			func(int) string { return "203.0.113.2:1" }, 60, 20, 3 * time.Second},
		{"PerClientGlobal: one client id from 100 addresses", func(int) string { return "north" },
			func(i int) string { return fmt.Sprintf("198.18.%d.%d:1", i%100/250, i%100+1) }, 600, 200, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startRedis(t)
			attack := func(pods []*fixture) (checked int) {
				for i := range tc.n {
					_, err := pods[i%len(pods)].Authenticate(tc.id(i), "wrong", ServiceScoring, tc.addr(i))
					var te *ThrottledError
					switch {
					case err == ErrNotAuthenticated:
						checked++
					case errors.As(err, &te):
						if te.RetryAfter != tc.wait {
							t.Fatalf("guess %d: got RetryAfter %v; want %v", i+1, te.RetryAfter, tc.wait)
						}
					default:
						t.Fatalf("guess %d: got %v", i+1, err)
					}
				}
				return checked
			}
			if got := attack(replicas(t, 1, "", nil)); got != tc.checked {
				t.Errorf("one replica in memory: got %d guesses checked; want %d", got, tc.checked)
			}
			if got := attack(replicas(t, 1, srv.url(), nil)); got != tc.checked {
				t.Errorf("one replica with Redis: got %d guesses checked; want %d", got, tc.checked)
			}
			srv.flush(t)
			if got := attack(replicas(t, 3, srv.url(), nil)); got != tc.checked {
				t.Errorf("three replicas sharing Redis: got %d guesses checked; want %d (one budget)", got, tc.checked)
			}
			if got := attack(replicas(t, 3, "", nil)); got != 3*tc.checked {
				t.Errorf("three replicas in memory: got %d guesses checked; want %d (three budgets)", got, 3*tc.checked)
			}
		})
	}
}

// TestRedisSameWaitsAsMemory: the Redis script and the in-memory buckets give the very same
// wait after every step of a long random run of failures and checks at a few client ids and
// addresses, with time going forward in microsecond steps. (A clock stepping back is where they
// may differ: in memory a full bucket is dropped at once, forgetting its last time, while its
// Redis key lives on until Redis's own clock expires it. Both refill nothing then.)
func TestRedisSameWaitsAsMemory(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	cfg, err := ThrottleConfig{PerClient: Bucket{Burst: 3, Refill: 700 * time.Millisecond},
		PerAddress:      Bucket{Burst: 5, Refill: 300 * time.Millisecond},
		PerClientGlobal: Bucket{Burst: 4, Refill: 1100 * time.Millisecond}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	mem := newThrottle(cfg)
	store, err := newRedisStore(srv.url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rng := rand.New(rand.NewPCG(19, 7))
	now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
	blocked := 0
	for step := range 3000 {
		ck, rk := fmt.Sprintf("c%d", rng.IntN(3)), fmt.Sprintf("10.0.0.%d", rng.IntN(3))
		// A failure is counted after a check that was let through, or now and then in debt, as
		// guesses checked at once are.
		if rng.IntN(3) == 0 && (mem.blockedHere(ck, rk, now) == 0 || rng.IntN(10) == 0) {
			mem.failHere(ck, rk, false, now)
			store.take(cfg, ck, rk, now)
		} else {
			now = now.Add(time.Duration(rng.IntN(150_000)) * time.Microsecond)
		}
		want := mem.blockedHere(ck, rk, now)
		got, ok := store.wait(cfg, ck, rk, now)
		if !ok || got != want {
			t.Fatalf("step %d (%s, %s): got wait %v (ok %v) from Redis; want %v as in memory", step, ck, rk, got, ok, want)
		}
		if want > 0 {
			blocked++
		}
	}
	// Clock stepped back by an hour: nothing refills (and nothing drains).
	mem.failHere("c0", "10.0.0.0", false, now)
	store.take(cfg, "c0", "10.0.0.0", now)
	back := now.Add(-time.Hour)
	want := mem.blockedHere("c0", "10.0.0.0", now)
	if got, _ := store.wait(cfg, "c0", "10.0.0.0", back); got != want {
		t.Errorf("clock back an hour: got wait %v; want %v, the wait at the last time counted", got, want)
	}
	t.Logf("%d of 3000 steps blocked", blocked)
	if blocked < 300 || blocked > 2700 {
		t.Errorf("got %d of 3000 steps blocked; want a run that is neither always free nor always blocked", blocked)
	}
	if n := store.fallbacks.Load(); n != 0 {
		t.Errorf("got %d fallbacks; want 0 with Redis up", n)
	}
}

// TestRedisDownAndBack: Redis killed in the middle of an attack. Each replica falls back on its
// own buckets, which counted its share of the failures all along: logins stay throttled, the
// change is logged once per replica however many logins follow, each decision without Redis is
// counted, and correct logins go on. Redis back: one line each, and the limit is shared again.
func TestRedisDownAndBack(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	logs := []*logBuffer{{}, {}, {}}
	pods := replicas(t, 3, srv.url(), logs)
	for _, p := range pods {
		p.throttle.shared.retry = 20 * time.Millisecond // Redis is tried again after 20 ms instead of 1 s
	}
	count := func(p *fixture, n int, addr string) (checked, held int) {
		for range n {
			_, err := p.Authenticate("acme-reader", "wrong", ServiceScoring, addr)
			var te *ThrottledError
			switch {
			case err == ErrNotAuthenticated:
				checked++
			case errors.As(err, &te) && te.RetryAfter == 6*time.Second:
				held++
			default:
				t.Fatalf("got %v; want ErrNotAuthenticated or a 6 s *ThrottledError", err)
			}
			time.Sleep(5 * time.Millisecond) // some attempts come after the retry time: Redis is tried again
		}
		return checked, held
	}
	// Shared: 6 failures from one address, two on each replica.
	for i := range 6 {
		if c, _ := count(pods[i%3], 1, "203.0.113.7:1"); c != 1 {
			t.Fatalf("failure %d: not checked", i+1)
		}
	}
	srv.stop()
	// Replica 0 counted 2 of the 6 itself: 8 more are checked, then 429, and so on each replica.
	for i, p := range pods {
		checked, held := count(p, 30, "203.0.113.7:1")
		if checked != 8 || held != 22 {
			t.Errorf("replica %d without Redis: got %d checked, %d throttled; want 8 and 22 (its own bucket)", i, checked, held)
		}
		if got := p.ThrottleFallbacks(); got != 30+8 {
			t.Errorf("replica %d: got %d fallbacks; want 38 (30 checks and 8 failures decided in memory)", i, got)
		}
		if _, err := p.Authenticate("acme-reader", "acme-secret", ServiceScoring, "198.51.100.1:1"); err != nil {
			t.Errorf("replica %d without Redis, a correct login elsewhere: got %v; want a token", i, err)
		}
	}
	srv.restart()
	time.Sleep(30 * time.Millisecond) // past the retry time
	// Shared again: 10 failures from a new address, spread over the replicas, and no more.
	checked := 0
	for i := range 30 {
		c, _ := count(pods[i%3], 1, "203.0.113.8:1")
		checked += c
	}
	if checked != 10 {
		t.Errorf("Redis back: got %d checked across three replicas; want 10 (one budget)", checked)
	}
	for i, l := range logs {
		s := l.String()
		if n := strings.Count(s, "Redis unreachable"); n != 1 {
			t.Errorf("replica %d: got %d 'Redis unreachable' lines; want 1:\n%s", i, n, s)
		}
		if n := strings.Count(s, "Redis reachable again"); n != 1 {
			t.Errorf("replica %d: got %d 'Redis reachable again' lines; want 1:\n%s", i, n, s)
		}
		if strings.Contains(s, "secret") {
			t.Errorf("replica %d: a log line mentions a secret:\n%s", i, s)
		}
	}
}

// TestRedisKeysExpire: every key is under the prefix and expires when its bucket is full again,
// so Redis keeps only recent failures.
func TestRedisKeysExpire(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	p := replicas(t, 1, srv.url(), nil)[0]
	for _, addr := range []string{"10.7.0.1", "[2001:db8::1]:1"} {
		if _, err := p.Authenticate("acme-reader", "wrong", ServiceScoring, addr); err != ErrNotAuthenticated {
			t.Fatalf("got %v; want ErrNotAuthenticated", err)
		}
	}
	c := srv.client()
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	// One failure each: a pair bucket is full again after 6 s, an address's after 3 s, the
	// client's after its two failures, 2 s.
	want := map[string]time.Duration{
		RedisKeyPrefix + "pair:11:acme-reader:10.7.0.1":      6 * time.Second,
		RedisKeyPrefix + "pair:11:acme-reader:2001:db8::/64": 6 * time.Second,
		RedisKeyPrefix + "addr:10.7.0.1":                     3 * time.Second,
		RedisKeyPrefix + "addr:2001:db8::/64":                3 * time.Second,
		RedisKeyPrefix + "client:acme-reader":                2 * time.Second,
	}
	if len(keys) != len(want) {
		t.Errorf("got keys %q; want %d", keys, len(want))
	}
	for _, k := range keys {
		full, ok := want[k]
		if !ok {
			t.Errorf("got key %q; want only the five buckets", k)
			continue
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= full-time.Second || ttl > full+time.Millisecond {
			t.Errorf("%s: got TTL %v; want about %v (when the bucket is full again)", k, ttl, full)
		}
	}
}

// TestRedisURL: a URL that does not parse is a start-up error; an unreachable Redis is not:
// the issuer starts, throttles in memory and counts the fallbacks.
func TestRedisURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := New(Options{ClientsFile: f.clients, KeysDir: f.keysDir, RedisURL: "http://user:hunter2@x"})
	if err == nil || !strings.Contains(err.Error(), "redis URL") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("got %v; want a redis URL error without the password", err)
	}
	if f.ThrottleFallbacks() != 0 || f.Close() != nil {
		t.Error("without Redis: want no fallbacks and nothing to close")
	}
	var log logBuffer
	p := newFixture(t, func(o *Options) {
		o.RedisURL = "redis://:hunter2@" + freeAddr(t)
		o.Throttle = ThrottleConfig{PerClient: Bucket{Burst: 2}}
		o.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	defer p.Close()
	for range 2 {
		if _, err := p.Authenticate("north", "wrong", ServiceScoring, "10.8.0.1"); err != ErrNotAuthenticated {
			t.Fatalf("got %v; want ErrNotAuthenticated", err)
		}
	}
	_, err = p.Authenticate("north", "wrong", ServiceScoring, "10.8.0.1")
	throttled(t, err)
	if p.ThrottleFallbacks() == 0 {
		t.Error("got 0 fallbacks; want the decisions made without Redis counted")
	}
	if s := log.String(); strings.Count(s, "Redis unreachable") != 1 || strings.Contains(s, "hunter2") {
		t.Errorf("got log %q; want one 'Redis unreachable' line, no password", s)
	}
}

// freeAddr is a free loopback host:port nothing listens on (internal/proc.FreePort).
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
