package batch

import (
	"context"
	"testing"
	"time"
)

// Both sides of the byte budget: below max a record goes, at max it waits (unless it is the
// oldest unanswered one) until a written record frees room, and the end of the stream frees
// every waiter.
func TestBudget(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b, stop := newBudget(ctx, 10)
	defer stop()
	b.add(9)
	if !b.wait(3) {
		t.Fatal("9 of 10 bytes held: record 3 must go")
	}
	b.add(1) // 10 of 10
	if !b.wait(0) {
		t.Fatal("the oldest record must go even with the budget full")
	}
	went := make(chan bool, 1)
	go func() { went <- b.wait(3) }()
	select {
	case <-went:
		t.Fatal("10 of 10 bytes held: record 3 went anyway")
	case <-time.After(50 * time.Millisecond):
	}
	b.written(1) // record 0 written: 9 held, record 1 the oldest
	if ok := wait(t, went, 5*time.Second, "record 3 after room was freed"); !ok {
		t.Fatal("wait reported the stream over")
	}
	b.add(5)
	go func() { went <- b.wait(7) }()
	cancel()
	if ok := wait(t, went, 5*time.Second, "a waiter at the end of the stream"); ok {
		t.Error("wait after the stream ended reported true")
	}
	if b.peak != 14 {
		t.Errorf("peak %d; want 14", b.peak)
	}
}
