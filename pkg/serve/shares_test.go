package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
)

// TestIdleStreamsHoldTheirReserve: header-only streams of one client without a concurrency limit
// hold a 2 MiB reserve each, and at most a quarter of the streams' half of the budget together
// (past it the client's next stream is 429); another client's streams, NDJSON and gRPC, are
// admitted and answered meanwhile. With a 64 MiB budget (a 32 MiB half) a header-only stream once
// took the whole half, and every other client's stream was 503.
func TestIdleStreamsHoldTheirReserve(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, func(c *Config) { c.MemoryBudget = 64 << 20 })
	auth := "Bearer " + h.token("batcher", clientSecret)
	const share = (64 << 20) / 2 / admission.ClientShareDivisor // 8 MiB: four reserves
	for i := range share / admission.StreamReserve {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		req, err := http.NewRequest(http.MethodPost, h.base+throwawayBatchPath, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ndjson)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req) // the head comes before any byte of the body
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			t.Fatalf("idle stream %d: got %d; want 200", i+1, resp.StatusCode)
		}
	}
	if _, got := sample(t, scrape(t, h), "yardstick_memory_budget_in_use_bytes", `service=`); got != share {
		t.Errorf("4 idle streams hold %v of the budget; want 4 reserves, %d", got, share)
	}
	if r := h.do(http.MethodPost, throwawayBatchPath, ndjson, "\n", "Authorization", auth); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("the client's 5th stream: got %d %s; want 429 with Retry-After 1", r.status, r.body)
	}
	demo := h.token("demo", "demo-secret")
	r := h.do(http.MethodPost, throwawayBatchPath, ndjson, strings.ReplaceAll(echoLine, "%s", "d"), "Authorization", "Bearer "+demo)
	if r.status != 200 || !strings.Contains(string(r.body), `{"summary":{"records":1,"ok":1,"failed":0}}`) {
		t.Errorf("another client's NDJSON stream: got %d %s; want its record answered", r.status, r.body)
	}
	if answers, _, err := echoBatch(t, h, demo, []*dynamicpb.Message{echoRecordOf("g", "echo", "x")}); err != nil || len(answers) != 1 {
		t.Errorf("another client's gRPC stream: got %d answers, %v; want 1 and OK", len(answers), err)
	}
}
