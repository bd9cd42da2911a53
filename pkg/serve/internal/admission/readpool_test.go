package admission

import (
	"context"
	"testing"
	"time"
)

// TestReadPoolSize: the pool is a quarter of the budget, and at least one read of the largest
// message; a read waits up to a second for it.
func TestReadPoolSize(t *testing.T) {
	t.Parallel()
	if readWait != time.Second || readPoolShare != 4 {
		t.Fatalf("read pool: wait %s, share 1/%d; want 1s and 1/4", readWait, readPoolShare)
	}
	if got := NewReadPool(256<<20, 3<<20).Size(); got != 64<<20 {
		t.Errorf("pool of a 256 MiB budget: got %d; want %d", got, 64<<20)
	}
	if got := NewReadPool(4<<20, 3<<20).Size(); got != 3<<20 {
		t.Errorf("pool of a 4 MiB budget: got %d; want one read of the largest message, %d", got, 3<<20)
	}
}

// TestReadPoolClientShare: a client's reads hold at most its share of the pool (a quarter of it
// without a concurrency limit, its concurrency's reads with one, at most half): a read past it
// waits up to the read wait and is refused, while another client's read is taken at once.
func TestReadPoolClientShare(t *testing.T) {
	t.Parallel()
	const read = 4 << 20
	p := NewReadPool(256<<20, read) // 64 MiB: 16 reads
	for _, tc := range []struct {
		conc int
		want int64
	}{{0, 16 << 20}, {1, read}, {3, 3 * read}, {100, 32 << 20}} {
		if got := shareOf(p.size, read, read, tc.conc); got != tc.want {
			t.Errorf("share at concurrency %d: got %d; want %d", tc.conc, got, tc.want)
		}
	}
	ctx := context.Background()
	var held []*Read
	for i := range 4 { // greedy's quarter: 4 reads
		r, ok := p.Take(ctx, "greedy", 0, read)
		if !ok {
			t.Fatalf("read %d of greedy's 4: refused", i+1)
		}
		held = append(held, r)
	}
	start := time.Now()
	if _, ok := p.Take(ctx, "greedy", 0, read); ok || time.Since(start) < readWait {
		t.Errorf("greedy's 5th read: got ok=%v after %s; want refused after the read wait", ok, time.Since(start))
	}
	start = time.Now()
	r, ok := p.Take(ctx, "other", 0, read)
	if !ok || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("another client's read: got ok=%v after %s; want it at once", ok, time.Since(start))
	}
	r.Done()
	got := make(chan bool, 1)
	go func() {
		r, ok := p.Take(ctx, "greedy", 0, read)
		r.Done()
		got <- ok
	}()
	time.Sleep(50 * time.Millisecond)
	held[0].Done()
	if !<-got {
		t.Error("greedy's read after one of its own ended: refused; want taken")
	}
	for _, r := range held {
		r.Done()
	}
	if p.HeldBy("greedy") != 0 || p.HeldBy("other") != 0 {
		t.Errorf("held after every read ended: %d, %d; want 0", p.HeldBy("greedy"), p.HeldBy("other"))
	}
}
