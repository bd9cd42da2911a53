package scoring

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

func benchServer(b testing.TB) *servetest.Server {
	return servetest.Start(b, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
}

// BenchmarkJSON40Items is one 40-item standard scoring request through the whole JSON front
// (loopback HTTP, auth, gateway, validation, MLE, reply), callers in parallel.
func BenchmarkJSON40Items(b *testing.B) {
	postInParallel(b, "/api/score/items/idsWithResults/standard", []byte(`{"items":`+items(40, 22, "L")+`}`), func() *http.Client { return http.DefaultClient })
}

// postInParallel posts body to path over loopback HTTP from parallel callers, each with the
// client newClient returns, and fails on any answer but 200.
func postInParallel(b *testing.B, path string, body []byte, newClient func() *http.Client) {
	s := benchServer(b)
	auth := "Bearer " + s.Token()
	url := s.Base + path
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := newClient()
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", auth)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkGRPC40Items is the same request over gRPC.
func BenchmarkGRPC40Items(b *testing.B) {
	s := benchServer(b)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	req := &scoringv1.ScoreItemResultsRequest{}
	for i := 1; i <= 40; i++ {
		id := measureID("L", i)
		r := int32(i % 2)
		req.Items = append(req.Items, &scoringv1.ItemResult{Id: &id, Result: &r})
	}
	ctx := s.Authed(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.ScoreItemResults(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkFrontHandler40Items is the server's side of one 40-item JSON request, in-process (no
// socket, no client): what the JSON front itself costs and allocates per request.
func BenchmarkFrontHandler40Items(b *testing.B) {
	serveInProcess(b, "/api/score/items/idsWithResults/standard", []byte(`{"items":`+items(40, 22, "L")+`}`))
}

// serveInProcess sends body to path through the service's HTTP handler b.N times.
func serveInProcess(b *testing.B, path string, body []byte) {
	s := benchServer(b)
	auth := "Bearer " + s.Token()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		s.Handler.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkJSONDifficulties40 is make bench-e2e's request (40 difficulties, Bayes) over loopback
// HTTP, one keep-alive connection per caller, for CPU profiles of the front (go test -cpuprofile).
func BenchmarkJSONDifficulties40(b *testing.B) {
	postInParallel(b, "/api/score/items/difficulties/bayes", difficulties40(), func() *http.Client {
		return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	})
}

// BenchmarkFrontHandlerDifficulties40 is the server side of make bench-e2e's request in-process.
func BenchmarkFrontHandlerDifficulties40(b *testing.B) {
	serveInProcess(b, "/api/score/items/difficulties/bayes", difficulties40())
}

// difficulties40 is make bench-e2e's request body: 40 difficulties, Bayes.
func difficulties40() []byte {
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, fmt.Sprintf(`{"difficulty":%d}`, 500+10*i))
	}
	return []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`)
}
