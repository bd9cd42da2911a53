package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"
)

// setLimits rewrites the batcher's entry of startTestBatch's clients file with limits (YAML flow
// mapping, "" for none) and reloads.
func setLimits(t *testing.T, h *harness, limits string) error {
	t.Helper()
	path := h.srv.cfg.ClientsFile
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "    limits:") {
			continue
		}
		out = append(out, l)
		if l == "  - clientId: batcher" && limits != "" {
			out = append(out, "    limits: "+limits)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = h.srv.issuer.Reload()
	return err
}

// throttled is yardstick_client_throttled_total{client, reason} as the server exports it.
func (h *harness) throttled(client, reason string) uint64 {
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "yardstick_client_throttled_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["client"] == client && got["reason"] == reason {
				return uint64(m.GetCounter().GetValue())
			}
		}
	}
	return 0
}

// TestClientRateBothFronts: one rate for JSON and gRPC calls alike (rate 1, burst 3): the
// headers on every answer, the fourth call 429 Throttled with Retry-After 1 on JSON and
// RESOURCE_EXHAUSTED with RetryInfo on gRPC; /authToken is not counted; another client is not
// touched.
func TestClientRateBothFronts(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{rate: 1, burst: 3}"); err != nil {
		t.Fatal(err)
	}
	tok := h.token("batcher", clientSecret)
	auth := []string{"Authorization", "Bearer " + tok}
	body := `{"text":"x"}`
	for i, want := range []string{`"rate";r=2;t=1`, `"rate";r=1;t=2`} {
		r := h.post(throwawayPath, body, auth...)
		if r.status != 200 || r.header.Get("RateLimit-Policy") != `"rate";q=1;w=1` || r.header.Get("RateLimit") != want {
			t.Fatalf("JSON call %d: got %d RateLimit-Policy %q RateLimit %q; want 200 \"rate\";q=1;w=1 %s", i+1, r.status,
				r.header.Get("RateLimit-Policy"), r.header.Get("RateLimit"), want)
		}
	}
	var hdr metadata.MD
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	if err := h.echoCall(ctx, echoRequest("x"), grpc.Header(&hdr)); err != nil {
		t.Fatalf("gRPC call 3: got %v; want OK (the third of the burst)", err)
	}
	if got := hdr.Get("ratelimit-policy"); len(got) != 1 || got[0] != `"rate";q=1;w=1` {
		t.Errorf("gRPC header ratelimit-policy: got %q; want \"rate\";q=1;w=1", got)
	}
	r := h.post(throwawayPath, body, auth...)
	if r.status != 429 || r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit") != `"rate";r=0;t=3` ||
		r.header.Get("RateLimit-Policy") != `"rate";q=1;w=1` {
		t.Fatalf("JSON call 4: got %d Retry-After %q RateLimit %q %q; want 429, 1, \"rate\";r=0;t=3", r.status,
			r.header.Get("Retry-After"), r.header.Get("RateLimit"), r.body)
	}
	want := `{"message":"Too many requests.","exceptionType":"Throttled","additionalInfo":"This client may make 1 requests a second (burst 3); retry after 1 seconds."}`
	if string(r.body) != want {
		t.Errorf("429 body: got %s; want %s", r.body, want)
	}
	err := h.echoCall(ctx, echoRequest("x"))
	st := status.Convert(err)
	var delay time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	if st.Code() != codes.ResourceExhausted || delay != time.Second {
		t.Errorf("gRPC call 5: got %s with RetryInfo %s; want RESOURCE_EXHAUSTED with 1s", st.Code(), delay)
	}
	h.token("batcher", clientSecret) // a login while throttled: 200, it is the login throttle's
	other := h.post(throwawayPath, body, "Authorization", "Bearer "+h.token("echo-only", clientSecret))
	if other.status != 200 || other.header.Get("RateLimit-Policy") != "" {
		t.Errorf("a client without limits: got %d with RateLimit-Policy %q; want 200 and no header", other.status, other.header.Get("RateLimit-Policy"))
	}
	if got := h.throttled("batcher", "rate"); got != 2 {
		t.Errorf("yardstick_client_throttled_total{client=batcher,reason=rate}: got %d; want 2", got)
	}
}

// TestClientConcurrencyRefusedAtOnce: concurrency 1: a second call while the first runs is 429
// at once (Retry-After 1), on either front; once the first is answered the next runs.
func TestClientConcurrencyRefusedAtOnce(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{concurrency: 1}"); err != nil {
		t.Fatal(err)
	}
	auth := []string{"Authorization", "Bearer " + h.token("batcher", clientSecret)}
	first := make(chan response, 1)
	go func() { first <- h.post(throwawayPath, `{"text":"slow"}`, auth...) }()
	<-h.echo.started
	start := time.Now()
	r := h.post(throwawayPath, `{"text":"x"}`, auth...)
	if r.status != 429 || r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.body), "may have 1 requests in progress at once") {
		t.Errorf("second call: got %d Retry-After %q %s; want 429, 1, the concurrency", r.status, r.header.Get("Retry-After"), r.body)
	}
	// A call queued for the slot would wait on the first call, which is held until after this
	// check: "at once" is well under the admission wait's 2 s (a loopback call under -race on a
	// busy machine takes up to several hundred milliseconds).
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the refusal took %s; want it at once", took)
	}
	h.echo.release <- struct{}{}
	if got := <-first; got.status != 200 {
		t.Fatalf("first call: got %d %s; want 200", got.status, got.body)
	}
	if r := h.post(throwawayPath, `{"text":"x"}`, auth...); r.status != 200 {
		t.Errorf("after the first ended: got %d %s; want 200", r.status, r.body)
	}
}

// TestStreamsPaced: a batch stream's records are counted against the rate and slowed, never
// answered 429, on NDJSON and gRPC alike; a stream takes a concurrency slot.
func TestStreamsPaced(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{rate: 20, burst: 1, concurrency: 1}"); err != nil {
		t.Fatal(err)
	}
	tok := h.token("batcher", clientSecret)
	const n = 11 // the first at once, ten more at 50 ms each
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"%d","path":"%s","body":{"text":"x"}}`+"\n", i, throwawayPath)
	}
	start := time.Now()
	r := h.do(http.MethodPost, throwawayBatchPath, ndjson, b.String(), "Authorization", "Bearer "+tok)
	took := time.Since(start)
	if r.status != 200 || strings.Count(string(r.body), `"status":200`) != n || strings.Contains(string(r.body), "429") {
		t.Fatalf("NDJSON: got %d %s; want 200 with %d records answered 200, none 429", r.status, r.body, n)
	}
	if r.header.Get("RateLimit-Policy") != `"rate";q=20;w=1` {
		t.Errorf("NDJSON head: got RateLimit-Policy %q; want \"rate\";q=20;w=1", r.header.Get("RateLimit-Policy"))
	}
	if took < 450*time.Millisecond {
		t.Errorf("NDJSON: %d records at 20/s took %s; want at least 450ms", n, took)
	}
	var records []*dynamicpb.Message
	for i := range n {
		records = append(records, echoRecordOf(fmt.Sprint(i), "echo", "x"))
	}
	start = time.Now()
	answers, _, err := echoBatch(t, h, tok, records)
	took = time.Since(start)
	if err != nil || len(answers) != n {
		t.Fatalf("gRPC: got %d answers, %v; want %d and OK", len(answers), err, n)
	}
	for _, a := range answers {
		if a.err != nil || a.text != "X" {
			t.Errorf("gRPC record %s: got error %v, text %q; want the handler's answer X", a.id, a.err, a.text)
		}
	}
	if took < 450*time.Millisecond {
		t.Errorf("gRPC: %d records at 20/s took %s; want at least 450ms", n, took)
	}
	if got := h.throttled("batcher", "stream"); got < 15 {
		t.Errorf("slowed records: got %d; want most of the 20 after each stream's first", got)
	}
	if got := h.throttled("batcher", "rate"); got != 0 {
		t.Errorf("records refused for the rate: got %d; want 0", got)
	}
}

// TestLimitsReload: a reload that changes a client's limits applies at the next call; one with
// a bad value is refused with file:line and the last good limits stay.
func TestLimitsReload(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{rate: 1, burst: 1}"); err != nil {
		t.Fatal(err)
	}
	auth := []string{"Authorization", "Bearer " + h.token("batcher", clientSecret)}
	body := `{"text":"x"}`
	if r1, r2 := h.post(throwawayPath, body, auth...), h.post(throwawayPath, body, auth...); r1.status != 200 || r2.status != 429 {
		t.Fatalf("rate 1, burst 1: got %d then %d; want 200 then 429", r1.status, r2.status)
	}
	err := setLimits(t, h, "{rate: 1, burst: -1}")
	if err == nil || !strings.Contains(err.Error(), h.srv.cfg.ClientsFile+`:3: client "batcher": limits.burst must be at least 1, got -1`) {
		t.Fatalf("a bad burst: got %v; want the file:line of the value", err)
	}
	if r := h.post(throwawayPath, body, auth...); r.status != 429 || r.header.Get("RateLimit-Policy") != `"rate";q=1;w=1` {
		t.Errorf("after a refused reload: got %d %q; want the last good limits: 429", r.status, r.header.Get("RateLimit-Policy"))
	}
	if err := setLimits(t, h, "{rate: 1000}"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if r := h.post(throwawayPath, body, auth...); r.status != 200 || r.header.Get("RateLimit-Policy") != `"rate";q=1000;w=1` {
			t.Fatalf("call %d after raising the rate: got %d %q; want 200 at q=1000", i+1, r.status, r.header.Get("RateLimit-Policy"))
		}
	}
	if err := setLimits(t, h, ""); err != nil {
		t.Fatal(err)
	}
	if r := h.post(throwawayPath, body, auth...); r.status != 200 || r.header.Get("RateLimit-Policy") != "" {
		t.Errorf("limits removed: got %d %q; want 200 with no header", r.status, r.header.Get("RateLimit-Policy"))
	}
}

// TestClientLimitsRedisUnreachable: with YARDSTICK_REDIS_URL naming a Redis that does not
// answer, the service starts and is ready, each client's series is on /metrics at 0 before any
// call, a client's rate is enforced in memory at rate/N (here 4/s over 2 replicas: a burst of 2),
// the change is logged once, and the decisions made without Redis are counted.
func TestClientLimitsRedisUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	h := startTestBatch(t, func(c *Config) {
		c.RedisURL, c.ClientRate, c.ClientBurst, c.Replicas = "redis://"+addr, 4, 4, 2
	})
	metrics := string(h.do("GET", "/metrics", "", "").body)
	for _, series := range []string{
		`yardstick_client_throttled_total{client="batcher",reason="rate",service="scoring"} 0`,
		`yardstick_client_throttled_total{client="echo-only",reason="concurrency",service="scoring"} 0`,
		`yardstick_client_throttled_total{client="other",reason="stream",service="scoring"} 0`,
		`yardstick_client_limit_fallbacks_total{service="scoring"} 0`,
	} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics before any call: no %s", series)
		}
	}
	auth := []string{"Authorization", "Bearer " + h.token("batcher", clientSecret)}
	var statuses []int
	for range 4 {
		statuses = append(statuses, h.post(throwawayPath, `{"text":"x"}`, auth...).status)
	}
	if fmt.Sprint(statuses) != "[200 200 429 429]" {
		t.Errorf("rate 4, burst 4 over 2 replicas without Redis: got %v; want [200 200 429 429] (a burst of 2 here)", statuses)
	}
	if n := strings.Count(h.logs.String(), "client limits: Redis unreachable"); n != 1 {
		t.Errorf("got %d 'client limits: Redis unreachable' lines; want 1", n)
	}
	m := regexp.MustCompile(`yardstick_client_limit_fallbacks_total\{service="scoring"\} (\d+)`).FindStringSubmatch(string(h.do("GET", "/metrics", "", "").body))
	if m == nil || m[1] != "4" {
		t.Errorf("fallbacks: got %v; want 4 (every call decided without Redis)", m)
	}
	if r := h.do("GET", "/readyz", "", ""); r.status != 200 {
		t.Errorf("/readyz: got %d; want 200", r.status)
	}
}

// TestLimitsReloadedUnderLoad: a client floods from four connections while its clients file
// entry is rewritten and reloaded from rate 20 to rate 100: the accepted calls follow, about
// burst + rate·t in each second (±20%), with no call refused for any other reason.
func TestLimitsReloadedUnderLoad(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{rate: 20, burst: 20}"); err != nil {
		t.Fatal(err)
	}
	auth := []string{"Authorization", "Bearer " + h.token("batcher", clientSecret)}
	var mu sync.Mutex
	counts := map[string]map[int]int{"before": {}, "after": {}}
	phase := atomic.Value{}
	phase.Store("before")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load().(string)
				r := h.post(throwawayPath, `{"text":"x"}`, auth...)
				mu.Lock()
				counts[p][r.status]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second)
	if err := setLimits(t, h, "{rate: 100, burst: 100}"); err != nil {
		t.Fatal(err)
	}
	phase.Store("after")
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	t.Logf("before the reload %v, after %v", counts["before"], counts["after"])
	for _, c := range []struct {
		phase string
		want  int
		why   string
	}{
		{"before", 40, "burst 20 + 20 in the second"},
		// The bucket was empty at the reload; its time owed, rescaled to the new rate, is a
		// fifth of a second: 80 at once, then 100 in the second.
		{"after", 180, "80 left of the new burst + 100 in the second"},
	} {
		// A machine too busy to send the rate gets all it sent answered: the limit is then
		// what was sent, not the rate.
		got, sent := counts[c.phase][http.StatusOK], counts[c.phase][http.StatusOK]+counts[c.phase][http.StatusTooManyRequests]
		if want := min(c.want, sent); got < want*8/10 || got > want*12/10 {
			t.Errorf("%s the reload: %d of %d answered 200; want %d ± 20%% (%s)", c.phase, got, sent, want, c.why)
		}
		for status, n := range counts[c.phase] {
			if status != http.StatusOK && status != http.StatusTooManyRequests {
				t.Errorf("%s the reload: %d answered %d; want only 200 and 429", c.phase, n, status)
			}
		}
	}
}

// TestGRPCThrottledBeforeItsMessage: on the gRPC port a throttled call is refused by the gRPC
// door's limit step, before the message step: a message the memory budget counts is neither
// queued for the budget nor decoded, and the refusal is the rate's (THROTTLED) at once, not the
// budget's (OVERLOADED) after the admission wait. The chain's own limit step does not count it
// again: a client with a burst of 2 makes 2 calls.
func TestGRPCThrottledBeforeItsMessage(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	if err := setLimits(t, h, "{rate: 0.1, burst: 2}"); err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+h.token("batcher", clientSecret))
	for i := range 2 {
		if err := h.echoCall(ctx, echoRequest("x")); err != nil {
			t.Fatalf("call %d of the burst of 2: got %v; want OK", i+1, err)
		}
	}
	full, fillErr := h.srv.gate.Budget.AdmitCall(context.Background(), "grpc", "", gauge(t, h, "yardstick_memory_budget_bytes", "")) // costs the whole budget
	if fillErr != nil {
		t.Fatal("could not fill the budget")
	}
	defer full.Release()
	large := echoOfSize(t, 100<<10) // over 64 KiB: the budget counts its decoding
	start := time.Now()
	err := h.echoCall(ctx, large)
	took := time.Since(start)
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != "THROTTLED" {
		t.Fatalf("a large call over the rate: got %v; want ResourceExhausted, reason THROTTLED", err)
	}
	if took > time.Second {
		t.Errorf("the refusal took %s; want it at once (the admission wait is %s)", took, h.srv.cfg.AdmissionWait)
	}
	if got := h.throttled("batcher", "rate"); got != 1 {
		t.Errorf("yardstick_client_throttled_total{client=batcher,reason=rate}: got %d; want 1", got)
	}
}
