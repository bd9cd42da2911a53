package serve

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/internal/redistest"
)

// TestRedisUnreachable: with YARDSTICK_REDIS_URL naming a Redis that does not answer, the
// service starts and is ready, /authToken still throttles (in the process's memory), the
// change is logged once and every decision made without Redis is counted in
// yardstick_login_throttle_fallbacks_total.
func TestRedisUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg, err := LoadConfig(scoringID, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0",
		"YARDSTICK_GRPC_ADDR=127.0.0.1:0", "YARDSTICK_REDIS_URL=redis://" + addr}, io.Discard)
	if err != nil || cfg.RedisURL != "redis://"+addr {
		t.Fatalf("got %q, %v; want the URL from YARDSTICK_REDIS_URL", cfg.RedisURL, err)
	}
	cfg.ReloadInterval = 0
	h := startTest(t, cfg)
	if r := h.do("GET", "/readyz", "", ""); r.status != 200 {
		t.Fatalf("/readyz: got %d; want 200", r.status)
	}
	statuses := map[int]int{}
	for range 12 {
		statuses[h.do("POST", "/authToken", "application/json", `{"clientId":"demo","clientSecret":"wrong"}`).status]++
	}
	if statuses[401] != 10 || statuses[429] != 2 {
		t.Errorf("got statuses %v; want 10 × 401 then 2 × 429 (the default burst of 10, in memory)", statuses)
	}
	m := regexp.MustCompile(`yardstick_login_throttle_fallbacks_total\{service="scoring"\} (\d+)`).FindStringSubmatch(string(h.do("GET", "/metrics", "", "").body))
	if m == nil || m[1] != "22" {
		t.Errorf("got fallbacks %v; want 22 (12 checks and 10 failures decided without Redis)", m)
	}
	if n := strings.Count(h.logs.String(), "Redis unreachable"); n != 1 {
		t.Errorf("got %d 'Redis unreachable' log lines; want 1:\n%s", n, h.logs.String())
	}
	if r := h.do("GET", "/readyz", "", ""); r.status != 200 {
		t.Errorf("/readyz after: got %d; want 200", r.status)
	}
}

// TestSlowRedisHoldsNoOtherStream: with the clients' rates shared through a Redis that has stopped
// answering (CLIENT PAUSE), a gRPC call's rate decision waits in the call's own goroutine, up to
// its 500 ms bound, not in the connection's reader (the tap handle): a health check sent on
// the same connection while the first call waits is answered before that decision ends, and the
// first call is then decided by the replica's own share (one fallback counted) and answered.
func TestSlowRedisHoldsNoOtherStream(t *testing.T) {
	t.Parallel()
	r := redistest.Start(t)
	// A read timeout of 1 s (the URL's; 250 ms by default): the call's 500 ms context ends the
	// decision first.
	h := startTestBatch(t, func(c *Config) { c.RedisURL = r.URL() + "?read_timeout=1s" })
	if err := setLimits(t, h, "{rate: 1000, burst: 1000}"); err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+h.token("batcher", clientSecret))
	if err := h.echoCall(ctx, echoRequest("x")); err != nil || h.srv.limits.Fallbacks() != 0 {
		t.Fatalf("a call with Redis answering: got %v, %d fallbacks; want OK, decided in Redis", err, h.srv.limits.Fallbacks())
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rc.Close()
	if err := rc.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	first := make(chan error, 1)
	go func() { first <- h.echoCall(ctx, echoRequest("x")) }()
	time.Sleep(50 * time.Millisecond) // the first call is in its decision, which lasts 500 ms
	if _, err := healthpb.NewHealthClient(h.grpc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("a health check on the same connection: got %v; want SERVING", err)
	}
	answered, pending := time.Since(start), h.srv.limits.Fallbacks() == 0
	if !pending {
		t.Errorf("the health check was answered %s after the first call was sent, after its Redis decision ended; want before: held behind it", answered)
	}
	if err := <-first; err != nil {
		t.Fatalf("the call whose decision Redis did not answer: got %v; want OK by the replica's own share", err)
	}
	if took, n := time.Since(start), h.srv.limits.Fallbacks(); took < 450*time.Millisecond || n != 1 {
		t.Errorf("the call Redis did not answer: took %s with %d fallbacks; want at least the decision's 500 ms, 1 fallback", took, n)
	}
	t.Logf("health check answered %s after the rated call was sent", answered)
}
