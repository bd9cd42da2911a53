package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

// TestServiceLoggerRequestLine: through the service logger (NewLogger, JSON), a request line is
// slog's line; a warning is written at once; a level below the logger's writes nothing.
func TestServiceLoggerRequestLine(t *testing.T) {
	t.Parallel()
	timeField := regexp.MustCompile(`^\{"time":"[^"]+",`)
	var out bytes.Buffer
	log, flush, err := NewLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	attrs := []slog.Attr{slog.String("request_id", "r1"), slog.String("route", "/x"), slog.Int("status", 200), slog.Float64("duration_ms", 0.042)}
	logRequest(context.Background(), log, slog.LevelDebug, "http request", attrs...)
	logRequest(context.Background(), log, slog.LevelWarn, "http request", attrs...)
	if out.Len() == 0 {
		t.Fatal("a warning waited for the batch; want it written at once")
	}
	logRequest(context.Background(), log, slog.LevelInfo, "http request", attrs...)
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	ref := slog.New(slog.NewJSONHandler(&want, nil))
	ref.LogAttrs(context.Background(), slog.LevelWarn, "http request", attrs...)
	ref.LogAttrs(context.Background(), slog.LevelInfo, "http request", attrs...)
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantLines := strings.Split(strings.TrimSpace(want.String()), "\n")
	if len(got) != 2 {
		t.Fatalf("got %d lines %q; want 2 (the debug line dropped)", len(got), got)
	}
	for i := range got {
		if a, b := timeField.ReplaceAllString(got[i], "{"), timeField.ReplaceAllString(wantLines[i], "{"); a != b {
			t.Errorf("line %d: got %s; want %s", i, a, b)
		}
	}
}
