package telemetry

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
)

// TestMetricsSeries: each label set counts on its own series, however often it is observed
// (observe caches the series it looked up once).
func TestMetricsSeries(t *testing.T) {
	t.Parallel()
	m := NewRecorder(slog.New(slog.DiscardHandler), "scoring")
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

// TestLogLevels: both fronts classify alike — information for answers and callers' mistakes,
// warnings for shed load, errors for our faults.
func TestLogLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   slog.Level
	}{
		{200, slog.LevelInfo}, {400, slog.LevelInfo}, {408, slog.LevelInfo}, {413, slog.LevelInfo}, {429, slog.LevelInfo}, {499, slog.LevelInfo},
		{500, slog.LevelError}, {502, slog.LevelError}, {503, slog.LevelWarn}, {504, slog.LevelError},
	} {
		if got := HTTPLevel(tc.status); got != tc.want {
			t.Errorf("HTTP %d: got %v; want %v", tc.status, got, tc.want)
		}
	}
	for _, tc := range []struct {
		code codes.Code
		want slog.Level
	}{
		{codes.OK, slog.LevelInfo}, {codes.InvalidArgument, slog.LevelInfo}, {codes.Unauthenticated, slog.LevelInfo},
		{codes.PermissionDenied, slog.LevelInfo}, {codes.Canceled, slog.LevelInfo},
		{codes.ResourceExhausted, slog.LevelWarn}, {codes.DeadlineExceeded, slog.LevelWarn},
		{codes.Internal, slog.LevelError}, {codes.Unknown, slog.LevelError}, {codes.Unavailable, slog.LevelError},
	} {
		if got := GRPCLevel(tc.code); got != tc.want {
			t.Errorf("gRPC %v: got %v; want %v", tc.code, got, tc.want)
		}
	}
}
