package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestAdmitStream(t *testing.T) {
	t.Parallel()
	b := New(4*StreamCost, 100000, prometheus.NewRegistry(), "scoring")
	s1, ok1 := b.AdmitStream("http")
	s2, ok2 := b.AdmitStream("http")
	if !ok1 || !ok2 {
		t.Fatal("two streams fit half the budget")
	}
	if _, ok := b.AdmitStream("http"); ok {
		t.Error("a third stream took more than half the budget")
	}
	s1.Release()
	s1.Release() // once
	s3, ok := b.AdmitStream("http")
	if !ok {
		t.Fatal("a released stream's room was not given back")
	}
	s2.Release()
	s3.Release()
	if b.Admitted() != 0 {
		t.Errorf("admitted %d after every release", b.Admitted())
	}
}

// TestAdmitRecordWaits: a record waits for budget, never refused, and gets it when it is given
// back; a stream that ends stops the wait.
func TestAdmitRecordWaits(t *testing.T) {
	t.Parallel()
	b := New(4*StreamCost, 100000, prometheus.NewRegistry(), "scoring")
	s, _ := b.AdmitStream("http")
	defer s.Release()
	held, ok := b.Admit(3 * StreamCost) // the budget is full
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
	held, _ = b.Admit(3 * StreamCost)
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
