package serve

// The gate on the gRPC port, as only a whole server shows it: what a refusal after the gate
// leaves held, and what the gate's refusals count against a connection.

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestThrottledGRPCConnectionStays: the gate refuses a client over its rate on the call's
// headers, before its message is read, and such refusals of an authenticated caller do not count
// against its connection as the refusals of credentials do (more than 200 in a second close it:
// TestGRPCAbusiveConnectionClosed): 250 calls refused for the rate, sent at once, leave the
// connection open.
func TestThrottledGRPCConnectionStays(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	// One call every 100 s: however slow the machine, none of the 250 is let in.
	if err := setLimits(t, h, "{rate: 0.01, burst: 1}"); err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+h.token("batcher", clientSecret))
	if err := h.echoCall(ctx, echoRequest("x")); err != nil {
		t.Fatalf("first call: got %v; want OK (the burst)", err)
	}
	// Ten senders, so that the refusals fall within a second of each other.
	codesSeen := make(chan codes.Code, 250)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 25 {
				err := h.echoCall(ctx, echoRequest("x"))
				codesSeen <- status.Code(err)
			}
		})
	}
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.ResourceExhausted {
			t.Fatalf("a call over the rate: got %v; want RESOURCE_EXHAUSTED", c)
		}
	}
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "yardstick_grpc_connections_closed_total" && f.GetMetric()[0].GetCounter().GetValue() != 0 {
			t.Errorf("yardstick_grpc_connections_closed_total: got %v; want 0", f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	if got := h.srv.limits.Throttled("batcher", "rate"); got != 250 {
		t.Errorf("yardstick_client_throttled_total{client=batcher,reason=rate}: got %d; want 250", got)
	}
}

// TestGRPCRefusedReadGivesBackItsPlace: a call the gate admitted holds a place of its client's
// concurrency; when the read pool then refuses it, before any interceptor, the place is given
// back as its stream ends (else a client would lose a place for every such refusal).
func TestGRPCRefusedReadGivesBackItsPlace(t *testing.T) {
	t.Parallel()
	var limits *quota.Limiter
	h := startGuard(t, func(s *Server) {
		s.guard.SetReadPool(admission.NewReadPool(0, s.guard.Ceiling())) // one read at a time
		var err error
		if limits, err = quota.New(quota.Config{Service: "forecast", Concurrency: 2}); err != nil {
			t.Fatal(err)
		}
		s.gate.Limits = limits
	})
	authed := bearer("Bearer " + h.token)
	holdCtx, release := context.WithCancel(authed)
	defer release()
	// The holder: admitted (one place of two), then holding the one read while its message does
	// not come.
	if _, err := h.conn.NewStream(holdCtx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read pool held", func() bool {
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		if r, ok := h.srv.guard.ReadPool().Take(gone, "probe", 0, 1); ok {
			r.Done()
			return false
		}
		return true
	})
	_, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(authed, scoreOfSize(t, 100))
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != rpcerr.ReasonOverloaded {
		t.Fatalf("a call while the read pool is held: got %v; want ResourceExhausted, reason %s", err, rpcerr.ReasonOverloaded)
	}
	waitFor(t, "the refused call's place given back", func() bool {
		slot, err := limits.Acquire("demo")
		slot.Done()
		return err == nil
	})
}
