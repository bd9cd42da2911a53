package admission

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkAdmitRelease is the budget's cost on a large call's path: its admission and release,
// with room (the common case), from every core at once.
func BenchmarkAdmitRelease(b *testing.B) {
	budget := New(1<<40, prometheus.NewRegistry(), "forecast")
	budget.SetWait(DefaultMemoryBudget) // waits are allowed, none happens
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			g, err := budget.AdmitCall(ctx, "grpc", "c", budget.Cost(testGroup, 1<<20, false))
			if err != nil {
				b.Fatal(err)
			}
			g.Release()
		}
	})
}
