package telemetry

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// NewLogger returns the service logger: JSON for clusters, text for people at a terminal. Lines
// below warning level are batched (logbatch.go); flush writes whatever is waiting and belongs at
// exit.
func NewLogger(w io.Writer, format, level string) (log *slog.Logger, flush func() error, err error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	bw := &batchWriter{w: w}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(bw, opts)
	case "text":
		h = slog.NewTextHandler(bw, opts)
	default:
		return nil, nil, fmt.Errorf("log format %q: want json or text", format)
	}
	return slog.New(urgentFlush{Handler: h, w: bw}), bw.Flush, nil
}

// ParseLevel reads a log level: debug, info, warn or error, in any case.
func ParseLevel(s string) (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return lv, nil
}
