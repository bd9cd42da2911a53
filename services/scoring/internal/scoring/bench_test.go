package scoring

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/servetest"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

func benchServer(b *testing.B) *servetest.Server {
	return servetest.Start(b, "scoring", func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		return New(content, cfg.Limits, slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
}

// BenchmarkJSON40Items is one 40-item standard scoring request through the whole JSON front
// (loopback HTTP, auth, gateway, validation, MLE, reply), callers in parallel.
func BenchmarkJSON40Items(b *testing.B) {
	s := benchServer(b)
	body := []byte(`{"items":` + items(40, 22, "L") + `}`)
	auth := "Bearer " + s.Token()
	url := s.Base + "/api/score/items/idsWithResults/standard"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", auth)
			resp, err := http.DefaultClient.Do(req)
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
	s := benchServer(b)
	body := []byte(`{"items":` + items(40, 22, "L") + `}`)
	auth := "Bearer " + s.Token()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/api/score/items/idsWithResults/standard", bytes.NewReader(body))
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
// HTTP, for CPU profiles of the front (go test -cpuprofile).
func BenchmarkJSONDifficulties40(b *testing.B) {
	s := benchServer(b)
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, fmt.Sprintf(`{"difficulty":%d}`, 500+10*i))
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`)
	auth := "Bearer " + s.Token()
	url := s.Base + "/api/score/items/difficulties/bayes"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
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

// BenchmarkFrontHandlerDifficulties40 is the server side of make bench-e2e's request in-process.
func BenchmarkFrontHandlerDifficulties40(b *testing.B) {
	s := benchServer(b)
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, fmt.Sprintf(`{"difficulty":%d}`, 500+10*i))
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`)
	auth := "Bearer " + s.Token()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/api/score/items/difficulties/bayes", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		s.Handler.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkBareDifficulties40 is bench/bare's handler in-process, the reference of
// BenchmarkFrontHandlerDifficulties40 (what net/http + encoding/json + the same measure calls cost).
func BenchmarkBareDifficulties40(b *testing.B) {
	bundle := measure.Demo()
	type request struct {
		Items []struct {
			Difficulty float64 `json:"difficulty"`
			Count      *int    `json:"count"`
		} `json:"items"`
		NumberCorrect    int     `json:"numberCorrect"`
		Framework        string  `json:"framework"`
		PriorAbility     float64 `json:"priorAbility"`
		PriorUncertainty float64 `json:"priorUncertainty"`
		ElapsedDays      float64 `json:"elapsedDays"`
	}
	type answer struct {
		Ability        int    `json:"ability"`
		AbilityDisplay string `json:"abilityDisplay"`
		Uncertainty    int    `json:"uncertainty"`
		Framework      string `json:"framework"`
		APIVersion     string `json:"apiVersion"`
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fw, _ := bundle.Framework(req.Framework)
		test := measure.Test{Correct: req.NumberCorrect}
		for _, it := range req.Items {
			n := 1
			if it.Count != nil {
				n = *it.Count
			}
			test.Items = append(test.Items, measure.Difficulty{Measure: it.Difficulty, Count: n})
		}
		prior := fw.Grow(measure.Normal{Mean: req.PriorAbility, SD: req.PriorUncertainty}, req.ElapsedDays)
		est, _ := fw.Bayes(test, prior)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer{measure.Round(est.Ability), fw.Display(est.Ability), measure.Round(est.Uncertainty), fw.Name, "dev"})
	})
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, fmt.Sprintf(`{"difficulty":%d}`, 500+10*i))
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/api/score/items/difficulties/bayes", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d %s", w.Code, w.Body)
		}
	}
}
