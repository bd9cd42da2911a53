package serve

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// TestReadPoolShareOfOneClient: 50 header-only gRPC calls of one client on one connection hold
// at most its share of the read pool (a quarter of it: 2 reads of 10); its calls past the share
// are refused after the read wait, and another client's call is answered at once meanwhile. Once,
// they held the whole pool until the read timeout, and every other client's call was
// RESOURCE_EXHAUSTED.
func TestReadPoolShareOfOneClient(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, func(c *Config) { c.MemoryBudget = 40 << 20 }) // a read pool of 10 MiB: 10 reads of 1 MiB
	if got := h.srv.guard.ReadPool().Size(); got != 10<<20 || h.srv.guard.Ceiling() != 1<<20 {
		t.Fatalf("read pool %d, ceiling %d; want 10 MiB of 1 MiB reads", got, h.srv.guard.Ceiling())
	}
	ctx, cancel := context.WithCancel(bearer("Bearer " + h.token("batcher", clientSecret)))
	defer cancel()
	refused := make(chan error, 50)
	for range 50 {
		cs, err := h.grpc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, throwawayMethod)
		if err != nil {
			t.Fatal(err)
		}
		go func() { refused <- cs.RecvMsg(dynamicpb.NewMessage(echoOut)) }()
	}
	waitFor(t, "the client's share of the pool held", func() bool { return h.srv.guard.ReadPool().HeldBy("batcher") == 2<<20 })
	demo := bearer("Bearer " + h.token("demo", "demo-secret"))
	start := time.Now()
	err := h.echoCall(demo, echoOfSize(t, 100))
	if status.Code(err) == codes.ResourceExhausted || time.Since(start) > 500*time.Millisecond {
		t.Errorf("another client's call beside them: got %v after %s; want it read at once", err, time.Since(start))
	}
	for range 48 {
		select {
		case err := <-refused:
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("a header-only call past the client's share: got %v; want RESOURCE_EXHAUSTED", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the calls past the client's share were not refused after the read wait")
		}
	}
	if got := h.srv.guard.ReadPool().HeldBy("batcher"); got != 2<<20 {
		t.Errorf("held by the client after the refusals: %d; want its two reads", got)
	}
}
