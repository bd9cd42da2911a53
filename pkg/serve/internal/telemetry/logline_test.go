package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRequestLineMatchesSlog: on 20,000 random records of a request line's shape — awkward text
// (controls, quotes, invalid UTF-8, U+2028, HTML), whole numbers, floats across encoding/json's
// format boundaries, every level — writeRequestLine writes exactly slog.JSONHandler's bytes.
func TestRequestLineMatchesSlog(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "http request", "/api/score/items/difficulties/bayes", `q"uote\back`, "tab\tnl\ncr\r", "\x00\x1f\x7f",
		"<b>&amp;</b>", "é 漢字 😀", "\u2028\u2029", "bad \xff\xfe byte", "\xe2\x80", "demo"}
	text := func() string {
		if r.IntN(2) == 0 {
			return texts[r.IntN(len(texts))]
		}
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	floats := []float64{0, math.Copysign(0, -1), 1.5, 0.001, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 123456789e13, 5e-324, math.MaxFloat64, -2.25}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelError + 4, slog.LevelDebug - 1}
	for i := 0; i < 20000; i++ {
		var attrs []slog.Attr
		for n := r.IntN(8); n > 0; n-- {
			switch r.IntN(3) {
			case 0:
				attrs = append(attrs, slog.String(text(), text()))
			case 1:
				attrs = append(attrs, slog.Int64(text(), int64(r.Uint64())))
			default:
				f := floats[r.IntN(len(floats))]
				if r.IntN(2) == 0 {
					f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
				}
				attrs = append(attrs, slog.Float64(text(), f))
			}
		}
		when := time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("z", 3600*(r.IntN(27)-12)))
		level, msg := levels[r.IntN(len(levels))], text()

		var want bytes.Buffer
		rec := slog.NewRecord(when, level, msg, 0)
		rec.AddAttrs(attrs...)
		if err := slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug - 10}).Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := &batchWriter{w: &got}
		if !writeRequestLine(w, when, level, msg, attrs) {
			t.Fatalf("record %d declined; want every string, whole-number and finite float record written", i)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("record %d:\ngot  %q\nwant %q", i, got.String(), want.String())
		}
	}
}

// TestRequestLineDeclines: attributes of other kinds and floats that are not finite take slog's
// way, untouched.
func TestRequestLineDeclines(t *testing.T) {
	t.Parallel()
	for _, a := range []slog.Attr{slog.Float64("f", math.NaN()), slog.Float64("f", math.Inf(-1)), slog.Bool("b", true),
		slog.Any("e", context.Canceled), slog.Group("g", slog.Int("n", 1)), slog.Duration("d", time.Second)} {
		var out bytes.Buffer
		w := &batchWriter{w: &out}
		if writeRequestLine(w, time.Now(), slog.LevelInfo, "m", []slog.Attr{slog.String("ok", "x"), a}) {
			t.Errorf("%v: written; want declined", a)
		}
		_ = w.Flush()
		if out.Len() != 0 {
			t.Errorf("%v: declined but wrote %q", a, out.String())
		}
	}
}

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
