package telemetry

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestLogLimiter: a cause writes a burst of 20 lines, then 5 a second; the first line written
// after a gap says how many were dropped, and each dropped line is counted. Causes are apart.
// TestLogLimiterSeriesAtZero: every cause's series is on /metrics from the start, at 0 (the
// dashboard's panel needed "or … * 0" while they were born at the first suppression).
func TestLogLimiterSeriesAtZero(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	l := NewLogLimiter(reg, "scoring")
	if got := testutil.CollectAndCount(reg, "yardstick_log_lines_suppressed_total"); got != 27 {
		t.Errorf("series before any suppression: got %d; want 27 (16 gRPC codes but OK, 11 HTTP statuses)", got)
	}
	for _, c := range [][2]string{{"grpc", "Unauthenticated"}, {"grpc", "ResourceExhausted"}, {"http", "429"}, {"http", "503"}} {
		if got := testutil.ToFloat64(l.suppressed.WithLabelValues(c[0], c[1])); got != 0 {
			t.Errorf("%s %s: got %v; want 0", c[0], c[1], got)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "code" && lp.GetValue() == "OK" {
					t.Errorf("OK among the limited codes: answered lines are never limited")
				}
			}
		}
	}
}

func TestLogLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := NewLogLimiter(prometheus.NewRegistry(), "scoring")
	l.now = func() time.Time { return now }
	for i := range 20 {
		if ok, dropped := l.Allow("grpc", "Unauthenticated"); !ok || dropped != 0 {
			t.Fatalf("line %d of the burst: got %v, %d dropped; want written, 0", i+1, ok, dropped)
		}
	}
	for i := range 7 {
		if ok, _ := l.Allow("grpc", "Unauthenticated"); ok {
			t.Fatalf("line %d past the burst: written; want dropped", 21+i)
		}
	}
	if ok, _ := l.Allow("http", "401"); !ok {
		t.Error("another cause: dropped; want written (causes are apart)")
	}
	now = now.Add(199 * time.Millisecond) // 0.995 of a token
	if ok, _ := l.Allow("grpc", "Unauthenticated"); ok {
		t.Error("199 ms later: written; want dropped (under one token)")
	}
	now = now.Add(time.Millisecond)
	ok, dropped := l.Allow("grpc", "Unauthenticated")
	if !ok || dropped != 8 {
		t.Errorf("200 ms later: got %v, %d dropped; want written, saying 8 were dropped", ok, dropped)
	}
	if got := testutil.ToFloat64(l.suppressed.WithLabelValues("grpc", "Unauthenticated")); got != 8 {
		t.Errorf("yardstick_log_lines_suppressed_total: got %v; want 8", got)
	}
	now = now.Add(time.Hour)
	for i := range 20 {
		if ok, _ := l.Allow("grpc", "Unauthenticated"); !ok {
			t.Fatalf("after an hour, line %d: dropped; want the burst back (and no more)", i+1)
		}
	}
	if ok, _ := l.Allow("grpc", "Unauthenticated"); ok {
		t.Error("line 21 after an hour: written; want dropped (the bucket holds at most 20)")
	}
}
