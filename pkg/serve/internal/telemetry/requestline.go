package telemetry

import (
	"context"
	"log/slog"
	"time"
)

// Every request writes one log line, on both fronts, through slog's JSON (or text) handler. An
// earlier build wrote the JSON lines by hand, byte for byte as slog does; an A/B in one
// bench-e2e run (docs/performance.md, "What was kept") found it saved nothing measurable (JSON
// 1.002, gRPC 1.028 of slog's CPU per call), so slog writes them.

// logRequest writes a request's log line. Logger.LogAttrs also walks the stack for the caller's
// program counter, which only a handler with AddSource prints (NewLogger's never do); a line per
// request skips that walk.
func logRequest(ctx context.Context, log *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}
