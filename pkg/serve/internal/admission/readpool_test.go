package admission

import (
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
