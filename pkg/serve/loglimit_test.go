package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestLogLimiter: a cause writes a burst of 20 lines, then 5 a second; the first line written
// after a gap says how many were dropped, and each dropped line is counted. Causes are apart.
func TestLogLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := newLogLimiter(prometheus.NewRegistry(), "scoring")
	l.now = func() time.Time { return now }
	for i := range 20 {
		if ok, dropped := l.allow("grpc", "Unauthenticated"); !ok || dropped != 0 {
			t.Fatalf("line %d of the burst: got %v, %d dropped; want written, 0", i+1, ok, dropped)
		}
	}
	for i := range 7 {
		if ok, _ := l.allow("grpc", "Unauthenticated"); ok {
			t.Fatalf("line %d past the burst: written; want dropped", 21+i)
		}
	}
	if ok, _ := l.allow("http", "401"); !ok {
		t.Error("another cause: dropped; want written (causes are apart)")
	}
	now = now.Add(199 * time.Millisecond) // 0.995 of a token
	if ok, _ := l.allow("grpc", "Unauthenticated"); ok {
		t.Error("199 ms later: written; want dropped (under one token)")
	}
	now = now.Add(time.Millisecond)
	ok, dropped := l.allow("grpc", "Unauthenticated")
	if !ok || dropped != 8 {
		t.Errorf("200 ms later: got %v, %d dropped; want written, saying 8 were dropped", ok, dropped)
	}
	if got := testutil.ToFloat64(l.suppressed.WithLabelValues("grpc", "Unauthenticated")); got != 8 {
		t.Errorf("yardstick_log_lines_suppressed_total: got %v; want 8", got)
	}
	now = now.Add(time.Hour)
	for i := range 20 {
		if ok, _ := l.allow("grpc", "Unauthenticated"); !ok {
			t.Fatalf("after an hour, line %d: dropped; want the burst back (and no more)", i+1)
		}
	}
	if ok, _ := l.allow("grpc", "Unauthenticated"); ok {
		t.Error("line 21 after an hour: written; want dropped (the bucket holds at most 20)")
	}
}

// TestRefusalsDoNotFloodTheLog: 300 calls without a token within a second are all counted, but
// only the burst and a few a second are logged; answered calls are all logged.
func TestRefusalsDoNotFloodTheLog(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	for range 3 { // 100 a connection: more would have it closed (grpcconn.go)
		score := scoringv1.NewScoringServiceClient(h.dial(t))
		for range 100 {
			if _, err := score.ScoreItemResults(context.Background(), scoreOfSize(t, 100)); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("got %v; want Unauthenticated", err)
			}
		}
	}
	score := scoringv1.NewScoringServiceClient(h.conn)
	if got := h.count(scoreMethod, "Unauthenticated"); got != 300 {
		t.Errorf("refusals counted: got %v; want 300", got)
	}
	authed := bearer("Bearer " + h.token)
	for range 30 {
		if _, err := score.ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) == codes.Unauthenticated {
			t.Fatal(err)
		}
	}
	var refused, answered int
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if !strings.Contains(line, `"route":"`+scoreMethod+`"`) {
			continue
		}
		if strings.Contains(line, `"code":"Unauthenticated"`) {
			refused++
		} else {
			answered++
		}
	}
	if refused < 20 || refused > 40 {
		t.Errorf("refusals logged: got %d of 300; want the burst of 20 and 5 a second (at most 40 in a few seconds)", refused)
	}
	if answered != 30 {
		t.Errorf("answered calls logged: got %d; want all 30", answered)
	}
}
