package quota

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// clock is a settable time for the local limiter.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Running is the client's calls in progress on this replica.
func (l *Limiter) Running(client string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[client]
}

// newLocalLimiter is a limiter without Redis over a fake clock; own are the clients file's
// limits by client id (each a registered client).
func newLocalLimiter(t *testing.T, cfg Config, own map[string]token.Limits) (*Limiter, *clock) {
	t.Helper()
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	cfg.Service = "scoring"
	cfg.Limits = func(id string) (token.Limits, bool) { l, ok := own[id]; return l, ok }
	cfg.Clients = func() []string {
		var ids []string
		for id := range own {
			ids = append(ids, id)
		}
		return ids
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.now = c.Now
	return l, c
}

// TestHeaders pins the draft's -10 syntax with literals.
func TestHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"rate 50", policyHeader(policy{rate: 50, burst: 100}), `"rate";q=50;w=1`},
		{"rate 1", policyHeader(policy{rate: 1, burst: 1}), `"rate";q=1;w=1`},
		{"rate 2.5 rounds down", policyHeader(policy{rate: 2.5, burst: 3}), `"rate";q=2;w=1`},
		{"rate 0.5: one each 2 s", policyHeader(policy{rate: 0.5, burst: 1}), `"rate";q=1;w=2`},
		{"rate 0.3: one each 4 s", policyHeader(policy{rate: 0.3, burst: 1}), `"rate";q=1;w=4`},
		{"empty, full in 1 s", stateHeader(decision{remaining: 0, full: time.Second}), `"rate";r=0;t=1`},
		{"t rounds up", stateHeader(decision{remaining: 7, full: 1001 * time.Millisecond}), `"rate";r=7;t=2`},
		{"full", stateHeader(decision{remaining: 9, full: 0}), `"rate";r=9;t=0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("got %s; want %s", tc.got, tc.want)
			}
		})
	}
}

// TestGCRA: a burst at once, then one request per interval; both sides of each edge.
func TestGCRA(t *testing.T) {
	t.Parallel()
	p := policy{rate: 10, burst: 3} // one each 100 ms
	now := time.Unix(1_800_000_000, 0)
	var tat time.Time
	var d decision
	for i, want := range []int{2, 1, 0} {
		if d, tat = gcra(p, tat, p.interval(), now); !d.allowed || d.remaining != want {
			t.Fatalf("request %d of the burst: got allowed=%v remaining %d; want allowed, %d", i+1, d.allowed, d.remaining, want)
		}
	}
	if d.full != 300*time.Millisecond {
		t.Errorf("after the burst: got full in %s; want 300ms", d.full)
	}
	if d, tat = gcra(p, tat, p.interval(), now); d.allowed || d.wait != 100*time.Millisecond || d.full != 300*time.Millisecond {
		t.Fatalf("past the burst: got %+v; want refused, wait 100ms, full in 300ms", d)
	}
	if d, tat = gcra(p, tat, p.interval(), now.Add(99*time.Millisecond)); d.allowed || d.wait != time.Millisecond {
		t.Errorf("1 ms early: got %+v; want refused with 1ms to wait", d)
	}
	if d, tat = gcra(p, tat, p.interval(), now.Add(100*time.Millisecond)); !d.allowed || d.remaining != 0 {
		t.Errorf("after one interval: got %+v; want allowed, 0 remaining", d)
	}
	if d, _ = gcra(p, tat, p.interval(), now.Add(time.Hour)); !d.allowed || d.remaining != 2 {
		t.Errorf("after idling: got %+v; want allowed with the burst less one left", d)
	}
	// A rate changed by a reload: the time owed is rescaled to the new interval.
	slow, fast := policy{rate: 1, burst: 1}, policy{rate: 1000, burst: 1000}
	_, tat = gcra(slow, time.Time{}, 0, now)
	if d, _ = gcra(slow, tat, slow.interval(), now); d.allowed {
		t.Fatalf("rate 1, burst 1, a second call at once: got allowed; want refused")
	}
	if d, _ = gcra(fast, tat, slow.interval(), now); !d.allowed || d.remaining != 998 {
		t.Errorf("raised to 1000/s: got %+v; want allowed with 998 left (the 1 s owed is now 1 ms)", d)
	}
	if d, _ = gcra(policy{rate: 0.5, burst: 1}, tat, slow.interval(), now); d.allowed || d.wait != 2*time.Second {
		t.Errorf("lowered to 0.5/s: got %+v; want refused for 2s (the 1 s owed is now 2 s)", d)
	}
	if got := (policy{rate: 10, burst: 5}).share(2); got != (policy{rate: 5, burst: 3}) {
		t.Errorf("share of 2 replicas: got %+v; want rate 5, burst ⌈5/2⌉ = 3", got)
	}
	if got := (policy{rate: 10, burst: 1}).share(3); got.burst != 1 {
		t.Errorf("share of a burst of 1: got %d; want 1", got.burst)
	}
}

// TestAdmitRate: 50 a second with the default burst (one second of it): 50 at once, the 51st a
// 429 Throttled with Retry-After 1 and RetryInfo 1 s, the headers pinned; a refused call
// spends nothing.
func TestAdmitRate(t *testing.T) {
	t.Parallel()
	l, c := newLocalLimiter(t, Config{Rate: 50}, map[string]token.Limits{"acme": {}})
	for i := range 50 {
		out := l.Admit("acme")
		if out.Err != nil {
			t.Fatalf("call %d of the burst: got %v; want allowed", i+1, out.Err)
		}
		out.Done()
	}
	out := l.Admit("acme")
	if out.Policy != `"rate";q=50;w=1` || out.State != `"rate";r=0;t=1` {
		t.Errorf("headers: got %s / %s; want \"rate\";q=50;w=1 / \"rate\";r=0;t=1", out.Policy, out.State)
	}
	h := rpcerr.ToHTTP(out.Err)
	if h.Status != 429 || h.Body.ExceptionType != "Throttled" || h.RetryAfter != 1 {
		t.Fatalf("the 51st: got %d %s Retry-After %d; want 429 Throttled Retry-After 1", h.Status, h.Body.ExceptionType, h.RetryAfter)
	}
	if want := "This client may make 50 requests a second (burst 50); retry after 1 seconds."; h.Body.AdditionalInfo != want {
		t.Errorf("additionalInfo: got %q; want %q", h.Body.AdditionalInfo, want)
	}
	st := status.Convert(out.Err)
	if st.Code() != codes.ResourceExhausted || retryDelay(st) != time.Second {
		t.Errorf("gRPC: got %s with RetryInfo %s; want RESOURCE_EXHAUSTED with 1s", st.Code(), retryDelay(st))
	}
	c.add(19 * time.Millisecond)
	if out := l.Admit("acme"); out.Err == nil {
		t.Errorf("19 ms later (the interval is 20 ms): got allowed; want refused")
	}
	c.add(time.Millisecond)
	if out := l.Admit("acme"); out.Err != nil || out.State != `"rate";r=0;t=1` {
		t.Errorf("20 ms later: got %v %s; want allowed with r=0;t=1", out.Err, out.State)
	}
	if got := l.Throttled("acme", ReasonRate); got != 2 {
		t.Errorf("throttled count: got %d; want 2", got)
	}
}

func retryDelay(st *status.Status) time.Duration {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// TestEffectiveLimits: a client's own limits win, each missing key takes the default, and the
// default burst is one second of the client's rate (at least 1).
func TestEffectiveLimits(t *testing.T) {
	t.Parallel()
	own := map[string]token.Limits{
		"own":       {Rate: 5, Burst: 7, Concurrency: 3},
		"rate-only": {Rate: 2.5},
		"slow":      {Rate: 0.2},
		"conc-only": {Concurrency: 1},
		"none":      {},
	}
	for _, tc := range []struct {
		name, client string
		cfg          Config
		want         policy
		rated        bool
		conc         int
	}{
		{"nothing set: unlimited", "none", Config{}, policy{}, false, 0},
		{"own limits", "own", Config{Rate: 100, Burst: 200, Concurrency: 9}, policy{5, 7}, true, 3},
		{"own rate, burst one second of it", "rate-only", Config{}, policy{2.5, 3}, true, 0},
		{"own rate, default burst", "rate-only", Config{Burst: 10}, policy{2.5, 10}, true, 0},
		{"a rate below 1: burst 1", "slow", Config{}, policy{0.2, 1}, true, 0},
		{"own concurrency, default rate", "conc-only", Config{Rate: 50}, policy{50, 50}, true, 1},
		{"defaults for a client without limits", "none", Config{Rate: 50, Burst: 100, Concurrency: 8}, policy{50, 100}, true, 8},
		{"an unregistered id: defaults", "nobody", Config{Rate: 1, Concurrency: 2}, policy{1, 1}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, _ := newLocalLimiter(t, tc.cfg, own)
			p, rated, conc := l.limitsOf(tc.client)
			if p != tc.want || rated != tc.rated || conc != tc.conc {
				t.Errorf("got %+v rated=%v concurrency %d; want %+v rated=%v concurrency %d", p, rated, conc, tc.want, tc.rated, tc.conc)
			}
		})
	}
}

// TestAdmitConcurrency: concurrency 1 and 2, each at its edge: refused at once (429,
// Retry-After 1) when full, a slot back after Done (called twice: once).
func TestAdmitConcurrency(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2} {
		t.Run("concurrency "+string(rune('0'+n)), func(t *testing.T) {
			t.Parallel()
			l, _ := newLocalLimiter(t, Config{}, map[string]token.Limits{"c": {Concurrency: n}})
			var held []Outcome
			for i := range n {
				out := l.Admit("c")
				if out.Err != nil {
					t.Fatalf("call %d of %d: got %v; want allowed", i+1, n, out.Err)
				}
				if out.Policy != "" || out.State != "" {
					t.Errorf("a client without a rate: got headers %q %q; want none", out.Policy, out.State)
				}
				held = append(held, out)
			}
			out := l.Admit("c")
			h := rpcerr.ToHTTP(out.Err)
			if h.Status != 429 || h.RetryAfter != 1 || h.Body.Message != "Too many requests in progress." {
				t.Fatalf("call %d: got %d Retry-After %d %q; want 429 Retry-After 1 \"Too many requests in progress.\"", n+1, h.Status, h.RetryAfter, h.Body.Message)
			}
			held[0].Done()
			held[0].Done()
			if got := l.Running("c"); got != n-1 {
				t.Errorf("after one Done, twice: got %d running; want %d", got, n-1)
			}
			if out := l.Admit("c"); out.Err != nil {
				t.Errorf("after a slot came back: got %v; want allowed", out.Err)
			}
			if got := l.Throttled("c", ReasonConcurrency); got != 1 {
				t.Errorf("throttled: got %d; want 1", got)
			}
		})
	}
}

// TestMetricsAtZero: every registered client's series is exported at 0 before any throttle;
// an id the file does not register is counted as "other", never as itself; a client a reload
// adds is exported at the next scrape, and one it removes keeps its series.
func TestMetricsAtZero(t *testing.T) {
	t.Parallel()
	own := map[string]token.Limits{"acme": {}, "north": {}}
	l, _ := newLocalLimiter(t, Config{Rate: 1}, own)
	reg := prometheus.NewRegistry()
	if err := l.Register(reg); err != nil {
		t.Fatal(err)
	}
	if got := testutil.CollectAndCount(reg, "yardstick_client_throttled_total"); got != 9 {
		t.Errorf("series before any throttle: got %d; want 9 (acme, north, other × rate, concurrency, stream)", got)
	}
	l.Admit("made-up")
	l.Admit("made-up")
	want := `
# HELP yardstick_client_limit_fallbacks_total Rate decisions made in this replica's memory (rate/N) because Redis did not answer.
# TYPE yardstick_client_limit_fallbacks_total counter
yardstick_client_limit_fallbacks_total{service="scoring"} 0
`
	if err := testutil.CollectAndCompare(reg, strings.NewReader(want), "yardstick_client_limit_fallbacks_total"); err != nil {
		t.Error(err)
	}
	if got, other := l.Throttled("made-up", ReasonRate), l.Throttled(OtherClient, ReasonRate); got != 0 || other != 1 {
		t.Errorf("an unregistered id: got %d under its id, %d under other; want 0 and 1", got, other)
	}
	if got := testutil.CollectAndCount(reg, "yardstick_client_throttled_total"); got != 9 {
		t.Errorf("series after a made-up id: got %d; want still 9", got)
	}
	own["south"] = token.Limits{}
	if got := testutil.CollectAndCount(reg, "yardstick_client_throttled_total"); got != 12 {
		t.Errorf("series after a reload added a client: got %d; want 12", got)
	}
	delete(own, "north")
	if got := testutil.CollectAndCount(reg, "yardstick_client_throttled_total"); got != 12 {
		t.Errorf("series after a reload removed a client: got %d; want still 12", got)
	}
}

// TestPace: a stream's records wait for the rate instead of being refused, are counted once
// each as slowed, and a stream that ends while one waits gets its context's cause.
func TestPace(t *testing.T) {
	t.Parallel()
	l, err := New(Config{Service: "forecast", Rate: 100, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, slot, err := l.OpenStream(context.Background(), "acme")
	if err != nil || l.Policy("acme") != `"rate";q=100;w=1` {
		t.Fatalf("open: got %v %q; want allowed with the policy", err, l.Policy("acme"))
	}
	defer slot.Done()
	start := time.Now()
	for range 31 {
		if err := Pace(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 290*time.Millisecond || took > 600*time.Millisecond {
		t.Errorf("31 records at 100/s, burst 1: took %s; want about 300ms", took)
	}
	if got := l.Throttled(OtherClient, ReasonStream); got < 25 || got > 30 {
		t.Errorf("slowed records: got %d; want 25 to 30 of the 30 after the first", got)
	}
	ended, cancel := context.WithCancelCause(ctx)
	cause := errors.New("stream over")
	cancel(cause)
	if err := Pace(ended); !errors.Is(err, cause) {
		t.Errorf("an ended stream: got %v; want its cause", err)
	}
	if err := Pace(context.Background()); err != nil {
		t.Errorf("a context without a stream: got %v; want nil", err)
	}
}
