package serve

// Garbage collector pacing. Go collects when the heap has grown by GOGC percent (100) over what
// the previous collection found live. A service's live heap is small (about 5 MB: content,
// signing keys, connection buffers), so under a load of small requests it collected dozens of
// times a second, and each collection marks the whole live heap: about a tenth of a small call's
// CPU went to collecting and to allocations assisting it (make bench-e2e with and without
// YARDSTICK_GC_HEADROOM=0; README, "Garbage collection").
//
// While no large request is admitted (the memory budget holds nothing), the pacer lets garbage
// build up to YARDSTICK_GC_HEADROOM bytes over the live heap before a collection: far fewer
// collections for a few more MiB of memory. The moment the budget admits a large request, Go's
// own pacing is back, so what large requests cost in memory — what the budget estimates, what
// make soak-budget and the group forecast's peak RSS in make bench-e2e measure — is unchanged.
// A GOGC in the environment turns the pacer off: the operator's setting stands.

import (
	"context"
	"log/slog"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"time"
)

const (
	// goDefaultGCPercent is Go's pacing (GOGC=100), in force while large requests are admitted.
	goDefaultGCPercent = 100
	// goHeapMinimum is Go's smallest heap goal at GOGC=100; it scales with the percent, so a
	// large percent over a tiny live heap would set a goal far beyond the headroom.
	goHeapMinimum = 4 << 20
	// gcPaceRefresh is how often an idle pacer follows the live heap.
	gcPaceRefresh = time.Second
)

// gcPacer sets the garbage collector's percent from the memory budget's state. The budget calls
// setIdle with its lock held, so calls come in the order the budget changes; run calls refresh.
type gcPacer struct {
	headroom   int64
	setPercent func(int) int // debug.SetGCPercent
	liveHeap   func() uint64 // bytes the last collection found live
	mu         sync.Mutex    // guards what follows, for refresh
	idle       bool          // no large request admitted: the headroom applies
	percent    int           // in force
}

func newGCPacer(headroom int64) *gcPacer {
	return &gcPacer{headroom: headroom, setPercent: debug.SetGCPercent, liveHeap: liveHeapBytes, percent: goDefaultGCPercent}
}

// relaxedPercent is the GC percent that lets garbage grow to headroom over a live heap of live
// bytes: at least Go's 100, and no more than keeps Go's heap minimum (which the percent scales)
// within live + headroom.
func relaxedPercent(headroom int64, live uint64) int {
	l := max(int64(live), 1<<20)
	p := headroom * 100 / l
	p = min(p, (l+headroom)*100/goHeapMinimum)
	return int(max(p, goDefaultGCPercent))
}

// setIdle: the budget holds nothing (idle) or holds a large request (not idle).
func (p *gcPacer) setIdle(idle bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = idle
	p.applyLocked()
}

// refresh follows the live heap while idle: the percent that gives the headroom changes with it.
func (p *gcPacer) refresh() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.applyLocked()
}

func (p *gcPacer) applyLocked() {
	want := goDefaultGCPercent
	if p.idle {
		want = relaxedPercent(p.headroom, p.liveHeap())
	}
	if want != p.percent {
		p.setPercent(want)
		p.percent = want
	}
}

// run refreshes the pacer every gcPaceRefresh until ctx ends, then gives Go its own pacing back.
func (p *gcPacer) run(ctx context.Context) {
	every(ctx, gcPaceRefresh, p.refresh)
	p.setIdle(false)
}

func liveHeapBytes() uint64 {
	sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(sample)
	if sample[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// paceGC starts the pacer on the server's budget unless gcPacing says not to. Main calls it once
// per process: the percent is the whole process's.
func (s *Server) paceGC(ctx context.Context, headroom int64, goGC string, log *slog.Logger) {
	by, on := gcPacing(headroom, goGC)
	if !on {
		log.Info("garbage collector pacing", "by", by)
		return
	}
	p := newGCPacer(headroom)
	s.budget.pace(p)
	go p.run(ctx)
	log.Info("garbage collector pacing", "by", by, "headroom_bytes", headroom)
}

// gcPacing says who paces the collector: the operator's GOGC when set, Go when the headroom is
// 0, else the pacer (on).
func gcPacing(headroom int64, goGC string) (by string, on bool) {
	switch {
	case goGC != "":
		return "GOGC=" + goGC + " (environment)", false
	case headroom == 0:
		return "Go (YARDSTICK_GC_HEADROOM=0)", false
	default:
		return "YARDSTICK_GC_HEADROOM while no large request is admitted", true
	}
}
