package serve

import (
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
)

// TestRedisUnreachable: with YARDSTICK_REDIS_URL naming a Redis that does not answer, the
// service starts and is ready, /authToken still throttles (in the process's memory), the
// change is logged once and every decision made without Redis is counted in
// yardstick_login_throttle_fallbacks_total. Only a whole server shows it: the URL read from the
// environment reaching the login throttle, readiness not waiting on Redis, the count on /metrics.
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
