package serve

// The gate on the gRPC port, as only a whole server shows it: what the gate's refusals of a
// client over its limits count against a connection, through the test service's own rpc.

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestThrottledGRPCConnectionStays: the gate refuses a client over its rate on the call's
// headers, before its message is read, and such refusals of an authenticated caller do not count
// against its connection as the refusals of credentials do (more than 200 in a second close it:
// grpcguard's TestAbusiveConnectionClosed): 250 calls refused for the rate, sent at once, leave the
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
	if got := h.throttled("batcher", "rate"); got != 250 {
		t.Errorf("yardstick_client_throttled_total{client=batcher,reason=rate}: got %d; want 250", got)
	}
}
