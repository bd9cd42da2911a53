package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

func TestLogBatching(t *testing.T) {
	t.Parallel()
	var out proc.LogBuffer
	log, flush, err := NewLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("http request", "route", "/a")
	if got := out.String(); got != "" {
		t.Errorf("an info line was written at once (%q); want it batched", got)
	}
	log.Warn("something odd")
	if got := out.String(); !strings.Contains(got, `"route":"/a"`) || !strings.Contains(got, "something odd") {
		t.Errorf("after a warning: got %q; want the waiting info line and the warning, in order", got)
	}
	log.With("k", "v").Error("broken")
	if got := out.String(); !strings.Contains(got, `"msg":"broken","k":"v"`) {
		t.Errorf("an error through With: got %q; want it written at once", got)
	}
	log.Info("later")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "later") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "later") {
		t.Error("an info line was never written by the timed flush")
	}
	log.Info("at exit")
	if err := flush(); err != nil || !strings.Contains(out.String(), "at exit") {
		t.Errorf("flush: %v, output %q; want the last line written", err, out.String())
	}
}

func TestLogBatchFullFlushes(t *testing.T) {
	t.Parallel()
	var out proc.LogBuffer
	log, _, err := NewLogger(&out, "text", "info")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1000)
	for i := 0; i < 70; i++ { // 70 lines of over 1 KB: past the 64 KiB batch
		log.Info(line)
	}
	if got := len(out.String()); got < 64<<10 {
		t.Errorf("after 70 KB of lines: %d bytes written; want a flush once 64 KiB waited", got)
	}
}

// TestLogRequest: a request line written without the stack walk is the line Logger.LogAttrs
// writes, and a level the logger drops writes nothing.
func TestLogRequest(t *testing.T) {
	t.Parallel()
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	var viaLogAttrs, viaLogRequest bytes.Buffer
	a := slog.New(slog.NewJSONHandler(&viaLogAttrs, &slog.HandlerOptions{ReplaceAttr: noTime}))
	b := slog.New(slog.NewJSONHandler(&viaLogRequest, &slog.HandlerOptions{ReplaceAttr: noTime}))
	attrs := []slog.Attr{slog.String("request_id", "r1"), slog.String("route", "/x \"y\""), slog.Int("status", 200), slog.Float64("duration_ms", 1.5)}
	a.LogAttrs(context.Background(), slog.LevelInfo, "http request", attrs...)
	logRequest(context.Background(), b, slog.LevelInfo, "http request", attrs...)
	if got, want := viaLogRequest.String(), viaLogAttrs.String(); got != want || want == "" {
		t.Errorf("got %q; want %q", got, want)
	}
	logRequest(context.Background(), b, slog.LevelDebug, "http request", attrs...)
	if got, want := viaLogRequest.String(), viaLogAttrs.String(); got != want {
		t.Errorf("a debug line at info level: got %q; want nothing more than %q", got, want)
	}
}
