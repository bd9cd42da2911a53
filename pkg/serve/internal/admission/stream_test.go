package admission

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestAdmitStream: a stream takes its reserve, no more, until its records' bytes arrive; streams
// together take at most half the budget (503 past it), and one client's at most its share (429
// past it), while another client's stream is still admitted.
func TestAdmitStream(t *testing.T) {
	t.Parallel()
	if StreamReserve != 2<<20 || StreamCost != 48<<20 || ClientShareDivisor != 4 {
		t.Fatalf("reserve %d, cost %d, divisor %d; want 2 MiB, 48 MiB, 4", StreamReserve, StreamCost, ClientShareDivisor)
	}
	b := New(64*StreamReserve, prometheus.NewRegistry(), "scoring") // streams' half: 32 reserves
	// A client without a concurrency limit: a quarter of the half, 8 reserves.
	var own []*Stream
	for i := range 8 {
		s, err := b.AdmitStream("http", "greedy", 0)
		if err != nil {
			t.Fatalf("stream %d of 8: %v", i+1, err)
		}
		own = append(own, s)
	}
	if got := b.Admitted(); got != 8*StreamReserve {
		t.Errorf("8 idle streams hold %d; want 8 reserves, %d", got, 8*StreamReserve)
	}
	if _, err := b.AdmitStream("http", "greedy", 0); status.Code(err) != codes.ResourceExhausted || rpcerr.ToHTTP(err).Status != 429 {
		t.Errorf("the 9th stream of one client: got %v; want 429", err)
	}
	// Another client is not touched; a client with concurrency 1 has one stream's worth.
	other, err := b.AdmitStream("http", "other", 1)
	if err != nil {
		t.Fatalf("another client's stream: %v", err)
	}
	large := New(1<<30, prometheus.NewRegistry(), "scoring")
	for _, tc := range []struct {
		b    *Budget
		conc int
		want int64
	}{
		{large, 0, 128 << 20},  // a quarter of the streams' half
		{large, 1, StreamCost}, // one stream's worth
		{large, 5, 240 << 20},  // five
		{large, 6, 256 << 20},  // at most half the streams' half
		{b, 1, 32 << 20},       // the same bound in a small budget
		{New(2*StreamReserve, prometheus.NewRegistry(), "scoring"), 0, StreamReserve}, // one stream at least
	} {
		if got := tc.b.streamShare(tc.conc); got != tc.want {
			t.Errorf("share of a %d MiB budget at concurrency %d: got %d; want %d", tc.b.capacity>>20, tc.conc, got, tc.want)
		}
	}
	// The streams' half: three more clients of 8 fill it with other's one; the next is 503.
	var all []*Stream
	for c := range 3 {
		for range 8 {
			s, err := b.AdmitStream("grpc", fmt.Sprint("c", c), 0)
			if err != nil && !(c == 2) {
				t.Fatalf("client c%d: %v", c, err)
			}
			if err == nil {
				all = append(all, s)
			}
		}
	}
	if len(all) != 23 {
		t.Fatalf("admitted %d streams of the last three clients; want 23 (the half holds 32)", len(all))
	}
	if _, err := b.AdmitStream("grpc", "late", 0); rpcerr.ToHTTP(err).Status != 503 {
		t.Errorf("a stream past the streams' half: got %v; want 503", err)
	}
	own[0].Release()
	own[0].Release() // once
	if _, err := b.AdmitStream("grpc", "late", 0); err != nil {
		t.Errorf("after a release: got %v; want the reserve given back", err)
	}
	for _, s := range append(append(own, other), all...) {
		s.Release()
	}
	if b.Admitted() != StreamReserve || b.StreamsHeldBy("greedy") != 0 {
		t.Errorf("admitted %d, greedy holds %d after every release but late's; want one reserve, 0", b.Admitted(), b.StreamsHeldBy("greedy"))
	}
}

// TestStreamHold: a record's bytes come from the stream's reserve while it has room, then from
// the client's share, waiting (never refused) for its own streams' holds to come back; Release
// gives back what its records still hold.
func TestStreamHold(t *testing.T) {
	t.Parallel()
	b := New(64*StreamReserve, prometheus.NewRegistry(), "scoring") // share: 8 reserves
	s, err := b.AdmitStream("http", "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inReserve, err := s.Hold(ctx, StreamReserve)
	if err != nil || b.Admitted() != StreamReserve {
		t.Fatalf("a record of the reserve's size: %v, admitted %d; want it in the reserve", err, b.Admitted())
	}
	beyond, err := s.Hold(ctx, 7*StreamReserve) // the rest of the share
	if err != nil || b.StreamsHeldBy("c") != 8*StreamReserve {
		t.Fatalf("beyond the reserve: %v, held %d; want the share full", err, b.StreamsHeldBy("c"))
	}
	got := make(chan error, 1)
	go func() {
		done, err := s.Hold(ctx, 1)
		if err == nil {
			done()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a byte past the client's share: got %v at once; want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	inReserve() // the reserve's room does not free the share
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("a byte that fits the reserve again still waits")
	}
	s.Release() // beyond's hold goes with it
	beyond()    // and this is a no-op
	if b.Admitted() != 0 || b.StreamsHeldBy("c") != 0 {
		t.Errorf("after Release: admitted %d, held %d; want 0, 0", b.Admitted(), b.StreamsHeldBy("c"))
	}
}

// TestAdmitRecordWaits: a record waits for budget, never refused, and gets it when it is given
// back; a stream that ends stops the wait.
func TestAdmitRecordWaits(t *testing.T) {
	t.Parallel()
	b := New(4*StreamCost, prometheus.NewRegistry(), "scoring")
	s, _ := b.AdmitStream("http", "c", 0)
	defer s.Release()
	held, ok := b.Admit(4*StreamCost - StreamReserve) // the budget is full
	if !ok {
		t.Fatal("admit")
	}
	got := make(chan error, 1)
	go func() {
		g, err := s.AdmitRecord(context.Background(), StreamCost)
		g.Release()
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a record was admitted past the budget: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	held.Release()
	if err := <-got; err != nil {
		t.Fatalf("record after the release: %v", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	held, _ = b.Admit(4*StreamCost - StreamReserve)
	defer held.Release()
	go func() { _, err := s.AdmitRecord(ctx, StreamCost); got <- err }()
	cause := errors.New("stream over")
	cancel(cause)
	if err := <-got; !errors.Is(err, cause) {
		t.Errorf("a cancelled wait ended with %v", err)
	}
	if g, err := s.AdmitRecord(context.Background(), 0); g != nil || err != nil {
		t.Errorf("a free record: %v %v", g, err)
	}
}
