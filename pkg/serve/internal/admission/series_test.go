package admission

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gauge is the value of the series name{front} (front "" for none) in reg.
func gauge(t *testing.T, reg *prometheus.Registry, name, front string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "front" && l.GetValue() == front || front == "" && l.GetName() == "service" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{front=%q}", name, front)
	return 0
}

// TestSeries: what an operator reads of the budget: its size and what is admitted of it, the
// requests waiting in the clients' queues, and each front's read pool (the JSON body pool and the
// gRPC read pool): its size and what the reads hold, summed over every client.
func TestSeries(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b := New(64<<20, reg, "forecast")
	b.SetWait(time.Minute)
	bodies := NewBodyPool(b, 1<<20)                        // 16 MiB
	reads := b.Report("grpc", NewReadPool(64<<20, 32<<20)) // 32 MiB: the largest message
	for _, tc := range []struct {
		name, front string
		want        float64
	}{
		{"yardstick_memory_budget_bytes", "", 64 << 20},
		{"yardstick_read_pool_bytes", "http", 16 << 20},
		{"yardstick_read_pool_bytes", "grpc", 32 << 20},
	} {
		if got := gauge(t, reg, tc.name, tc.front); got != tc.want {
			t.Errorf("%s{front=%q}: got %v; want %v", tc.name, tc.front, got, tc.want)
		}
	}
	ctx := context.Background()
	r1, err := bodies.Take(ctx, "a", 0, true, 3<<20, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := bodies.Take(ctx, "b", 0, true, 100, 1<<20)
	r3, _ := reads.Take(ctx, "a", 0, 5<<20)
	if got := gauge(t, reg, "yardstick_read_pool_in_use_bytes", "http"); got != 3<<20+100 {
		t.Errorf("the body pool held by two clients' bodies: got %v; want %d", got, 3<<20+100)
	}
	if got := gauge(t, reg, "yardstick_read_pool_in_use_bytes", "grpc"); got != 5<<20 {
		t.Errorf("the gRPC read pool held: got %v; want %d", got, 5<<20)
	}
	hold, _ := b.Admit(60 << 20)
	if got := gauge(t, reg, "yardstick_memory_budget_in_use_bytes", ""); got != 60<<20 || b.Admitted() != 60<<20 {
		t.Errorf("in use: got %v (Admitted %d); want %d", got, b.Admitted(), 60<<20)
	}
	done := make(chan *Grant, 2)
	for _, c := range []string{"a", "b"} { // 10 MiB each: neither fits beside the 60
		go func() { g, _ := b.admit(ctx, c, 10<<20, b.wait); done <- g }()
	}
	queued := func(want float64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); gauge(t, reg, "yardstick_memory_budget_queued_requests", "") != want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("yardstick_memory_budget_queued_requests: got %v; want %v", gauge(t, reg, "yardstick_memory_budget_queued_requests", ""), want)
			}
		}
	}
	queued(2)
	hold.Release()
	for range 2 {
		g := <-done
		if g == nil {
			t.Error("a queued call: refused; want admitted once the budget came free")
		}
		g.Release()
	}
	queued(0)
	for _, r := range []*Read{r1, r2, r3} {
		r.Done()
	}
	for _, front := range []string{"http", "grpc"} {
		if got := gauge(t, reg, "yardstick_read_pool_in_use_bytes", front); got != 0 {
			t.Errorf("%s read pool after every read: got %v; want 0", front, got)
		}
	}
}
