package quota

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// replicas are n limiters sharing redis (as n replicas of a service), each logging to log.
func replicas(t *testing.T, n int, url string, log *logBuffer, limits func(string) (token.Limits, bool)) []*Limiter {
	t.Helper()
	var out []*Limiter
	for range n {
		l, err := New(Config{Service: "scoring", Replicas: n, RedisURL: url, Limits: limits,
			Log: slog.New(slog.NewTextHandler(log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		out = append(out, l)
	}
	return out
}

// flood sends calls of client to the replicas in turn from 8 goroutines for d and counts those
// allowed.
func flood(ls []*Limiter, client string, d time.Duration) int64 {
	var allowed atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for g := range 8 {
		wg.Go(func() {
			for i := g; time.Now().Before(end); i++ {
				if out := ls[i%len(ls)].Admit(client); out.Err == nil {
					allowed.Add(1)
				}
				time.Sleep(200 * time.Microsecond)
			}
		})
	}
	wg.Wait()
	return allowed.Load()
}

// TestRedisTwoReplicasOneRate: one client spread over two replicas sharing Redis gets its rate,
// not twice it: accepted within ±20% of rate·t + burst.
func TestRedisTwoReplicasOneRate(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	own := func(string) (token.Limits, bool) { return token.Limits{Rate: 100, Burst: 10}, true }
	var log logBuffer
	ls := replicas(t, 2, r.url(), &log, own)
	const secs = 2
	got := flood(ls, "acme", secs*time.Second)
	want := int64(100*secs + 10)
	if got < want*8/10 || got > want*12/10 {
		t.Errorf("accepted over %d s on 2 replicas: got %d; want %d ± 20%%", secs, got, want)
	}
	if strings.Contains(log.String(), "unreachable") {
		t.Errorf("Redis was up: got a fallback line:\n%s", log.String())
	}
	t.Logf("accepted %d of a limit of %d (%.1f%%)", got, want, 100*float64(got)/float64(want))
}

// TestRedisDownAndBack: Redis killed mid-run, each replica enforces rate/N in its own memory
// (so the two together still give about the rate), logs one WARN, counts its fallbacks, and
// once Redis is back the budget is shared again with one INFO, without a restart.
func TestRedisDownAndBack(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	own := func(client string) (token.Limits, bool) {
		if client == "slow" { // a key that lives 100 s: still there when the test looks, however loaded
			return token.Limits{Rate: 0.01, Burst: 1}, true
		}
		return token.Limits{Rate: 100, Burst: 10}, true
	}
	var log logBuffer
	ls := replicas(t, 2, r.url(), &log, own)
	if got := flood(ls, "acme", time.Second); got < 88 || got > 132 {
		t.Fatalf("with Redis: got %d; want 110 ± 20%%", got)
	}
	r.stop()
	// Each replica: 50/s and a burst of 5 in its own memory; together 100/s + 10.
	got := flood(ls, "acme", 2*time.Second)
	if got < 168 || got > 252 {
		t.Errorf("Redis down, 2 s on 2 replicas at rate/2 each: got %d; want 210 ± 20%%", got)
	}
	for i, l := range ls {
		if l.Fallbacks() == 0 {
			t.Errorf("replica %d: no fallback counted while Redis was down", i)
		}
	}
	if n := strings.Count(log.String(), "Redis unreachable"); n != 2 {
		t.Errorf("WARN lines: got %d; want one per replica (2):\n%s", n, log.String())
	}
	r.restart()
	time.Sleep(time.Second + 100*time.Millisecond) // each replica may try Redis again (the breaker waits 1 s)
	// The first call to find Redis back tries it; the calls meanwhile decide locally.
	flood(ls, "other", 200*time.Millisecond)
	before := ls[0].Fallbacks() + ls[1].Fallbacks()
	got = flood(ls, "acme", 2*time.Second)
	if got < 168 || got > 252 {
		t.Errorf("Redis back: got %d; want 210 ± 20%%", got)
	}
	if after := ls[0].Fallbacks() + ls[1].Fallbacks(); after != before {
		t.Errorf("Redis back: %d more decisions without it; want none: shared again", after-before)
	}
	if n := strings.Count(log.String(), "Redis reachable again"); n != 2 {
		t.Errorf("INFO lines: got %d; want one per replica (2):\n%s", n, log.String())
	}
	// acme's key lives only until its bucket refills (≈ 0.1 s), less than a loaded machine may
	// take to look: the key of a slow client is written by one more decision, and looked at.
	if out := ls[0].Admit("slow"); out.Err != nil || ls[0].Fallbacks()+ls[1].Fallbacks() != before {
		t.Errorf("a first call of another client with Redis back: got %v, %d more fallbacks; want allowed, in Redis", out.Err, ls[0].Fallbacks()+ls[1].Fallbacks()-before)
	}
	c := r.client()
	defer c.Close()
	if n, err := c.Exists(context.Background(), RedisKeyPrefix+"scoring:slow").Result(); err != nil || n != 1 {
		t.Errorf("the shared key after Redis came back: got %d, %v; want it written again", n, err)
	}
}

// TestRedisLimitsReloadedUnderLoad: the client's rate changes while calls flow (as a reload of
// the clients file changes it): the accepted rate follows at once on both replicas.
func TestRedisLimitsReloadedUnderLoad(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	var rate atomic.Int64
	rate.Store(50)
	own := func(string) (token.Limits, bool) { return token.Limits{Rate: float64(rate.Load()), Burst: 5}, true }
	var log logBuffer
	ls := replicas(t, 2, r.url(), &log, own)
	if got := flood(ls, "acme", 2*time.Second); got < 84 || got > 126 {
		t.Errorf("at 50/s for 2 s: got %d; want 105 ± 20%%", got)
	}
	rate.Store(200)
	if got := flood(ls, "acme", 2*time.Second); got < 320 || got > 480 {
		t.Errorf("reloaded to 200/s, 2 s: got %d; want 400 ± 20%%", got)
	}
}
