package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// NewLogger returns the service logger, JSON or text; flush writes the lines still batched (below)
// and belongs at exit.
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

// A request line written alone costs a system call, a fifth of a small JSON request's CPU: lines
// below warning level wait at most flushEvery (or until maxBatch bytes wait); a warning or an error
// is written at once with all before it. A crash loses at most flushEvery of lines, never an error.
const (
	flushEvery = 100 * time.Millisecond
	maxBatch   = 64 << 10
)

type batchWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	pending bool // a timed flush is scheduled
}

func (b *batchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) >= maxBatch {
		return len(p), b.flushLocked()
	}
	if !b.pending {
		b.pending = true
		time.AfterFunc(flushEvery, func() { _ = b.Flush() })
	}
	return len(p), nil
}

// Flush writes every waiting line.
func (b *batchWriter) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	return b.flushLocked()
}

func (b *batchWriter) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// urgentFlush flushes its writer after each record of warning level or above.
type urgentFlush struct {
	slog.Handler
	w *batchWriter
}

func (h urgentFlush) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h urgentFlush) WithAttrs(attrs []slog.Attr) slog.Handler {
	return urgentFlush{Handler: h.Handler.WithAttrs(attrs), w: h.w}
}

func (h urgentFlush) WithGroup(name string) slog.Handler {
	return urgentFlush{Handler: h.Handler.WithGroup(name), w: h.w}
}
