package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// forecastDispatcher does what a unary forecast does, in miniature: decode the body, forecast,
// encode the answer. Its cost sets the scale the engine's overhead is measured against.
func forecastDispatcher(fw *measure.Framework) DispatcherFunc {
	return func(_ context.Context, _ string, body []byte) (int, []byte) {
		var req struct {
			PriorAbility, PriorUncertainty, ElapsedDays, TestUncertainty float64
			CutLevels                                                    []float64
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return 400, []byte(`{}`)
		}
		f := fw.Forecast(measure.Normal{Mean: req.PriorAbility, SD: req.PriorUncertainty}, req.ElapsedDays, req.TestUncertainty, req.CutLevels)
		return 200, encodeEntry(f)
	}
}

func benchBody(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"r%d","path":"/api/forecast/reading","body":{"priorAbility":%d,"priorUncertainty":60,"elapsedDays":%d,"testUncertainty":35,"cutLevels":[400,700,1000]}}`+"\n", i, 200+i%900, i%300)
	}
	return b.String()
}

// BenchmarkEngine compares one stream of 10,000 forecast records through the engine (over a
// loopback connection, and in-process on a recorder) with a bare loop making the same
// dispatches one after the other. ns/record is the figure to compare.
func BenchmarkEngine(b *testing.B) {
	const n = 10_000
	fw, _ := measure.Demo().Framework("lexile")
	d := forecastDispatcher(fw)
	body := benchBody(n)
	b.Run("bare-loop", func(b *testing.B) {
		recs := make([]Record, 0, n)
		for line := range strings.SplitSeq(strings.TrimSuffix(body, "\n"), "\n") {
			r, err := ParseRecord([]byte(line))
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, r)
		}
		b.ResetTimer()
		for b.Loop() {
			for _, r := range recs {
				d(context.Background(), r.Path, r.Body)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("engine-in-process/workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				w := deadlineRecorder{httptest.NewRecorder()}
				if _, err := Serve(context.Background(), w, strings.NewReader(body), d, Options{Workers: workers}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
		b.Run(fmt.Sprintf("engine-loopback/workers=%d", workers), func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = Serve(r.Context(), w, r.Body, d, Options{Workers: workers})
			}))
			defer srv.Close()
			for b.Loop() {
				resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(resp.Body)
				lines := 0
				for sc.Scan() {
					lines++
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if lines != n+1 {
					b.Fatalf("%d lines", lines)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}

// deadlineRecorder is a recorder with the deadlines a connection has (as no-ops), so that the
// engine runs in-process.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }
