package serve

import (
	"errors"
	"runtime"
	"testing"
)

func TestRelaxedPercent(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		headroom int64
		live     uint64
		want     int
	}{
		{"typical live heap: 32 MiB over 5 MiB", 32 * mib, 5 * mib, 640},
		{"live heap as large as the headroom: Go's 100", 32 * mib, 32 * mib, 100},
		{"live heap larger than the headroom: never under 100", 32 * mib, 64 * mib, 100},
		{"tiny live heap: capped so Go's 4 MiB minimum × percent stays within live + headroom", 32 * mib, 1 * mib, 825},
		{"no live heap read yet: taken as 1 MiB", 32 * mib, 0, 825},
		{"smallest headroom allowed over 4 MiB live", 4 * mib, 4 * mib, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := relaxedPercent(tc.headroom, tc.live)
			if got != tc.want {
				t.Errorf("relaxedPercent(%d, %d): got %d; want %d", tc.headroom, tc.live, got, tc.want)
			}
			// What the percent promises: Go's goal, max(live × (1 + p/100), 4 MiB × p/100), is at
			// most live + headroom whenever the live heap is under the headroom.
			if l := max(int64(tc.live), mib); l < tc.headroom {
				goal := max(l*(100+int64(got))/100, 4*mib*int64(got)/100)
				if goal > l+tc.headroom {
					t.Errorf("heap goal %d over live + headroom %d", goal, l+tc.headroom)
				}
			}
		})
	}
}

// fakePacer is a pacer whose percent and live heap are the test's.
func fakePacer(headroom int64, live *uint64) (*gcPacer, *[]int) {
	var set []int
	p := newGCPacer(headroom)
	p.setPercent = func(v int) int { set = append(set, v); return 0 }
	p.liveHeap = func() uint64 { return *live }
	return p, &set
}

// TestGCPacerFollowsTheBudget: Go's 100 the moment the budget admits a large request, the
// headroom's percent once it holds nothing again, and no call when nothing changes.
func TestGCPacerFollowsTheBudget(t *testing.T) {
	t.Parallel()
	live := uint64(5 << 20)
	p, set := fakePacer(32<<20, &live)
	b := newBudget(1000, newMetrics("scoring").registry, "scoring")
	b.pace(p)
	want := []int{640}
	check := func(step string) {
		t.Helper()
		if len(*set) != len(want) {
			t.Fatalf("%s: percents set %v; want %v", step, *set, want)
		}
		for i := range want {
			if (*set)[i] != want[i] {
				t.Fatalf("%s: percents set %v; want %v", step, *set, want)
			}
		}
	}
	check("budget empty when paced")
	small, _ := b.admit(0)
	check("a request that costs nothing")
	a1, _ := b.admit(10)
	want = append(want, 100)
	check("first large request")
	a2, _ := b.admit(20)
	check("second large request")
	a1.release()
	check("one of two released")
	a2.shrink(5)
	check("shrunk, not empty")
	a2.release()
	want = append(want, 640)
	check("budget empty again")
	small.release()
	p.refresh()
	check("refresh with the same live heap")
	live = 16 << 20
	p.refresh()
	want = append(want, 200)
	check("live heap grew while idle")
	a3, _ := b.admit(1)
	live = 5 << 20
	p.refresh()
	want = append(want, 100)
	check("refresh while busy")
	a3.shrink(0)
	want = append(want, 640)
	check("shrunk to nothing")
	a3.release()
	check("released after shrinking to nothing")
}

func TestGCHeadroom(t *testing.T) {
	t.Parallel()
	none := func() (uint64, error) { return 0, errors.New("no limit") }
	limit := func(n uint64) func() (uint64, error) { return func() (uint64, error) { return n, nil } }
	for _, tc := range []struct {
		name  string
		cfg   int64
		limit func() (uint64, error)
		want  int64
	}{
		{"no memory limit", 32 << 20, none, 32 << 20},
		{"256 MiB limit: an eighth is 32 MiB", 32 << 20, limit(256 << 20), 32 << 20},
		{"255 MiB limit: under 32 MiB", 32 << 20, limit(255 << 20), 255 << 20 / 8},
		{"64 MiB limit", 32 << 20, limit(64 << 20), 8 << 20},
		{"off stays off", 0, limit(64 << 20), 0},
	} {
		if got := gcHeadroom(Config{GCHeadroom: tc.cfg}, tc.limit); got != tc.want {
			t.Errorf("%s: got %d; want %d", tc.name, got, tc.want)
		}
	}
}

func TestGCPacing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		headroom int64
		goGC     string
		on       bool
	}{
		{32 << 20, "", true},
		{0, "", false},
		{32 << 20, "200", false},
		{32 << 20, "off", false},
	} {
		if _, on := gcPacing(tc.headroom, tc.goGC); on != tc.on {
			t.Errorf("headroom %d, GOGC %q: got on=%v; want %v", tc.headroom, tc.goGC, on, tc.on)
		}
	}
	if got := goGC([]string{"HOME=/", "GOGC=300", "GOGCX=1"}); got != "300" {
		t.Errorf("goGC: got %q; want 300", got)
	}
	if got := goGC([]string{"GOGCX=1"}); got != "" {
		t.Errorf("goGC without GOGC: got %q; want empty", got)
	}
}

// TestLiveHeapBytes: the runtime metric the pacer reads exists and says something.
func TestLiveHeapBytes(t *testing.T) {
	t.Parallel()
	runtime.GC() // the metric is what the last collection marked
	if got := liveHeapBytes(); got == 0 {
		t.Errorf("live heap: got 0 bytes; want the runtime's /gc/heap/live:bytes (this process has a heap)")
	}
}
