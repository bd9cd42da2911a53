package forecast

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// BenchmarkJSONGroup is one group forecast through the whole JSON front: body rewrite, decoding,
// auth, validation, the forecasts, encoding ~15 MB of answer for 100,000 students.
func BenchmarkJSONGroup(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("students=%d", n), func(b *testing.B) {
			s := servetest.Start(b, testIdentity, func(cfg serve.Config) serve.Service {
				content, err := measure.OpenLive("")
				if err != nil {
					b.Fatal(err)
				}
				return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
			}, nil)
			var sb strings.Builder
			sb.WriteString(`{"testUncertainty":30,"cutLevels":[400,600,800],"studentData":[`)
			for i := 0; i < n; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"priorAbility":%d,"priorUncertainty":%d,"elapsedDays":%d}`, 200+i%900, 40+i%50, i%365)
			}
			sb.WriteString("]}")
			body := []byte(sb.String())
			auth := "Bearer " + s.Token()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodPost, s.Base+"/api/forecast/reading/group", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// BenchmarkJSONGrowth is one growth percentile call (two priors, five cuts) through the whole
// JSON front over loopback, against one single forecast the same way, in the same run:
// go test -run '^$' -bench JSONGrowth -benchmem ./services/forecast/internal/forecast/
func BenchmarkJSONGrowth(b *testing.B) {
	s := servetest.Start(b, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	auth := "Bearer " + s.Token()
	for _, c := range []struct{ name, path, body string }{
		{"growth", "/api/forecast/growth", `{"framework":"lexile","grade":6,"timeOfYear":"EOY","ability":820,"priors":[{"grade":5,"timeOfYear":"EOY","ability":760},{"grade":4,"timeOfYear":"EOY","ability":640}],"percentiles":[10,25,50,75,90]}`},
		{"single forecast", "/api/forecast/reading", single},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, s.Base+c.path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
