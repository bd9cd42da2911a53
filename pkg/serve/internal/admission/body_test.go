package admission

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestBodyPoolTake: a body holds its declared bytes (the route's limit when it declares none),
// except a small body of a route other than the group forecasts, which skips the budget; the
// pool is a quarter of the budget and at least the largest body.
func TestBodyPoolTake(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	b := New(256<<20, prometheus.NewRegistry(), "forecast")
	p := NewBodyPool(b, 16<<20)
	if got := p.reads.Size(); got != 64<<20 {
		t.Fatalf("pool of a 256 MiB budget: got %d; want %d", got, 64<<20)
	}
	if got := NewBodyPool(New(32<<20, prometheus.NewRegistry(), "forecast"), 16<<20).reads.Size(); got != 16<<20 {
		t.Errorf("pool of a 32 MiB budget: got %d; want the largest body, %d", got, 16<<20)
	}
	for _, tc := range []struct {
		name     string
		group    bool
		declared int64
		want     int64
	}{
		{"scoring body under 64 KiB skips", false, SmallRequestBytes - 1, 0},
		{"scoring body of 64 KiB holds its bytes", false, SmallRequestBytes, SmallRequestBytes},
		{"scoring body of no length holds the limit", false, -1, limit},
		{"empty group body holds nothing but is taken", true, 0, 0},
		{"small group body holds its bytes", true, 100, 100},
		{"group body of no length holds the limit", true, -1, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := tc.name // a client each: the subtests share the pool, not a share
			r, err := p.Take(context.Background(), client, 0, tc.group, tc.declared, limit)
			if err != nil {
				t.Fatalf("got %v; want taken", err)
			}
			if got := p.reads.HeldBy(client); got != tc.want {
				t.Errorf("held: got %d; want %d", got, tc.want)
			}
			r.Done()
			r.Done() // once
			if got := p.reads.HeldBy(client); got != 0 {
				t.Errorf("held after Done: got %d; want 0", got)
			}
		})
	}
}

// TestBodyPoolShare: a client's bodies in flight hold at most its share of the pool (a quarter
// without a concurrency limit): the body that fills the share is taken, the next byte past it is
// refused as Overloaded after the read wait, and another client's body is taken meanwhile.
func TestBodyPoolShare(t *testing.T) {
	t.Parallel()
	b := New(64<<20, prometheus.NewRegistry(), "forecast")
	p := NewBodyPool(b, 1<<20) // 16 MiB: 4 MiB a client
	ctx := context.Background()
	first, err := p.Take(ctx, "slow", 0, true, 3<<20, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Done()
	last, err := p.Take(ctx, "slow", 0, true, 1<<20, 16<<20) // fills the share exactly
	if err != nil {
		t.Fatalf("the body that fills the share: got %v; want taken", err)
	}
	if _, err := p.Take(ctx, "slow", 0, true, 1, 16<<20); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("one byte past the share: got %v; want ResourceExhausted", err)
	}
	other, err := p.Take(ctx, "other", 0, true, 4<<20, 16<<20)
	if err != nil {
		t.Errorf("another client's body: got %v; want taken", err)
	}
	other.Done()
	last.Done()
	if r, err := p.Take(ctx, "slow", 0, true, 1<<20, 16<<20); err != nil {
		t.Errorf("once a body of the client is done: got %v; want taken", err)
	} else {
		r.Done()
	}
	if b.Admitted() != 0 {
		t.Errorf("budget held by bodies being read: got %d; want 0", b.Admitted())
	}
}

// TestAdmitBody: a body read is admitted by what it holds: a group call by its entries (its
// brackets), another route by its size (nothing under 64 KiB).
func TestAdmitBody(t *testing.T) {
	t.Parallel()
	b := New(1<<30, prometheus.NewRegistry(), "forecast")
	group := []byte(`{"testUncertainty":30,"cutLevels":[400],"groupEntries":[{},{}]}`)
	for _, tc := range []struct {
		name  string
		group *Group
		body  []byte
		want  int64
	}{
		{"group by its brackets", testGroup, group, 256<<10 + 1000*5}, // 5 brackets of 62 bytes: more than 16 × 62
		{"other route under 64 KiB", nil, make([]byte, SmallRequestBytes-1), 0},
		{"other route of 64 KiB", nil, make([]byte, SmallRequestBytes), 30 * 65536},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// In turn, not in parallel: each reads the whole budget's Admitted.
			g, err := b.AdmitCall(context.Background(), "http", "c", b.CostOfBody(tc.group, tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Admitted(); got != tc.want {
				t.Errorf("admitted: got %d; want %d", got, tc.want)
			}
			g.Release()
		})
	}
}
