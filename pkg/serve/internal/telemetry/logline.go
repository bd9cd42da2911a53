package telemetry

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Every API request writes one log line, on both fronts. slog's JSON handler is general: it walks
// the attributes through interfaces and formats every float with encoding/json (a pooled encoder
// per value), which cost about 2.5% of a small call's CPU. A request line has a fixed shape —
// strings, whole numbers and one float — so the service logger's JSON lines are written here
// instead, byte for byte as slog.JSONHandler writes them (TestRequestLineMatchesSlog compares
// them); any other attribute, a float that is not finite, or a text logger takes slog's way.

// linePool keeps line buffers between requests.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeRequestLine writes the record as h's JSON handler would, and reports false, having
// written nothing, when an attribute is not of a kind it writes.
func writeRequestLine(w *batchWriter, t time.Time, level slog.Level, msg string, attrs []slog.Attr) bool {
	for _, a := range attrs {
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64:
		case slog.KindFloat64:
			if f := a.Value.Float64(); math.IsInf(f, 0) || math.IsNaN(f) {
				return false
			}
		default:
			return false
		}
	}
	bp := linePool.Get().(*[]byte)
	b := append((*bp)[:0], `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = appendJSONString(b, level.String())
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, msg)
	for _, a := range attrs {
		b = append(b, ',')
		b = appendJSONString(b, a.Key)
		b = append(b, ':')
		switch a.Value.Kind() {
		case slog.KindString:
			b = appendJSONString(b, a.Value.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, a.Value.Int64(), 10)
		default:
			b = appendJSONFloat(b, a.Value.Float64())
		}
	}
	b = append(b, '}', '\n')
	_, _ = w.Write(b)
	*bp = b
	linePool.Put(bp)
	return true
}

// appendJSONString quotes s as slog's JSON handler does: control characters, quote and backslash
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, HTML characters as they are.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat writes a finite float as encoding/json does (slog's JSON handler calls it).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// logRequest writes a request's log line. Logger.LogAttrs also walks the stack for the caller's
// program counter, which only a handler with AddSource prints (NewLogger's never do); a line per
// request skips that walk, and the service logger's JSON lines skip slog's formatting
// (writeRequestLine).
func logRequest(ctx context.Context, log *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	now := time.Now()
	if u, ok := h.(urgentFlush); ok && u.jsonLines && writeRequestLine(u.w, now, level, msg, attrs) {
		if level >= slog.LevelWarn {
			_ = u.w.Flush()
		}
		return
	}
	r := slog.NewRecord(now, level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}
