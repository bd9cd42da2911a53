package forecast

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// BenchmarkBatch is issue 21's throughput target: one stream of 10,000 forecast records over a
// loopback connection against an in-process loop doing the same work record by record, with
// the frame's own decoding and encoding (serve.Wire) and the handler alone, with protojson
// instead, and through the frame's HTTP handler on a recorder (token, log line and all, no
// network). ns/record is the figure to compare; the target is batch ≤ loop-handler-wire / 0.7.
func BenchmarkBatch(b *testing.B) {
	const n = 10_000
	bodies := make([][]byte, n)
	var batch bytes.Buffer
	for i := range n {
		bodies[i] = fmt.Appendf(nil, `{"priorAbility":%d,"priorUncertainty":60,"elapsedDays":%d,"testUncertainty":35,"cutLevels":[400,700,1000]}`, 200+i%900, i%300)
		fmt.Fprintf(&batch, `{"id":"r%d","path":"/api/forecast/reading","body":%s}`+"\n", i, bodies[i])
	}
	s := start(b)
	auth := "Bearer " + s.Token()
	perRecord := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	}
	// cpuPerRecord reports the process's CPU time (user and system) a record took, client
	// included: on a shared machine it varies less than the wall time.
	cpuPerRecord := func(b *testing.B) func() {
		start := cpuTime()
		return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N*n), "cpu-ns/record") }
	}
	b.Run("loop-handler-protojson", func(b *testing.B) {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		srv := New(content, LimitsOf(s.Config), slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer cpuPerRecord(b)()
		for b.Loop() {
			for _, body := range bodies {
				var req forecastv1.ForecastRequest
				if err := protojson.Unmarshal(body, &req); err != nil {
					b.Fatal(err)
				}
				resp, err := srv.ForecastReading(context.Background(), &req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := protojson.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		}
		perRecord(b)
	})
	b.Run("loop-handler-wire", func(b *testing.B) {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		srv := New(content, LimitsOf(s.Config), slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer cpuPerRecord(b)()
		for b.Loop() {
			for _, body := range bodies {
				var req forecastv1.ForecastRequest
				if fieldErr, err := srv.wire.UnmarshalFields(body, &req); err != nil || fieldErr != nil {
					b.Fatal(err, fieldErr)
				}
				resp, err := srv.ForecastReading(context.Background(), &req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := srv.wire.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		}
		perRecord(b)
	})
	b.Run("loop-front-in-process", func(b *testing.B) {
		defer cpuPerRecord(b)()
		for b.Loop() {
			for _, body := range bodies {
				req := httptest.NewRequest(http.MethodPost, "/api/forecast/reading", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				w := httptest.NewRecorder()
				s.Handler.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		}
		perRecord(b)
	})
	b.Run("batch-loopback", func(b *testing.B) {
		defer cpuPerRecord(b)()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, s.Base+"/api/forecast/batch", bytes.NewReader(batch.Bytes()))
			req.Header.Set("Content-Type", "application/x-ndjson")
			req.Header.Set("Authorization", auth)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			lines := 0
			for sc.Scan() {
				lines++
			}
			resp.Body.Close()
			if lines != n+1 {
				b.Fatalf("%d lines", lines)
			}
		}
		perRecord(b)
	})
}

func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
