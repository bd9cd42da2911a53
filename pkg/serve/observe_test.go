package serve

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsSeries: each label set counts on its own series, however often it is observed
// (observe caches the series it looked up once).
func TestMetricsSeries(t *testing.T) {
	t.Parallel()
	m := newMetrics("scoring")
	for range 3 {
		m.observe("grpc", "/a", "OK", time.Millisecond)
	}
	m.observe("grpc", "/a", "InvalidArgument", time.Millisecond)
	m.observe("http", "/a", "200", time.Millisecond)
	for _, tc := range []struct {
		front, route, code string
		want               float64
	}{
		{"grpc", "/a", "OK", 3},
		{"grpc", "/a", "InvalidArgument", 1},
		{"http", "/a", "200", 1},
		{"http", "/a", "OK", 0},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(tc.front, tc.route, tc.code)); got != tc.want {
			t.Errorf("requests{%s %s %s}: got %v; want %v", tc.front, tc.route, tc.code, got, tc.want)
		}
	}
	if got := testutil.CollectAndCount(m.latency); got != 2 {
		t.Errorf("latency series: got %d; want 2 (grpc /a, http /a)", got)
	}
}
