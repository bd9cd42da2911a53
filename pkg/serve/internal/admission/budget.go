// Package admission is the memory budget. A group call (a service's rpc of many entries, whose
// heap grows with them: one of 100,000 entries held about 85 MB while it ran; twenty at once took a
// process to 2 GiB) and every other call whose cost grows with its size takes its estimated heap
// from the budget once its body is read (JSON) or before it is decoded (gRPC), and gives it back
// when answered; a call that does not fit waits in its client's queue (fair.go), then is answered
// 503 (gRPC ResourceExhausted) with Retry-After. The package owns the budget's size, how a call is
// costed (cost.go: a group call by its service's model, GroupCost), GOMEMLIMIT, the streams'
// admission (stream.go), the JSON body pool (body.go) and the gRPC read pool (readpool.go).
//
// The budget is a share of the container's memory limit (MemoryBudgetFraction, default 0.5), so
// the calls admitted, the process's baseline and the small calls all fit under GOMEMLIMIT.
// Small calls skip it: a body under 64 KiB on a route other than a group call's costs at most a
// few MB (measured: 0.7 MB for a 64 KiB body, 2.5 MB for the worst shape), of the order of a
// connection's own buffers, and they must not be refused while a few large group calls fill the
// budget. Group calls never skip it: a few KiB of empty entries already cost megabytes.
//
// The budget, the streams' half of it and the read pool are weighted semaphores, whose strict FIFO
// keeps a large call from being starved by small ones; fair.go orders the calls by client.
package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

const (
	// DefaultMemoryBudget is the budget when the process has no memory limit (make run, tests).
	DefaultMemoryBudget = 512 << 20
	// GoMemLimitRatio is the share of the container's memory limit GOMEMLIMIT is set to: the
	// garbage collector works harder as the heap nears it, instead of the kernel killing the pod.
	GoMemLimitRatio   = 0.9
	MaxFraction       = GoMemLimitRatio // the largest budget fraction: under GOMEMLIMIT
	SmallRequestBytes = 64 << 10        // smaller bodies skip the budget, but a group call's
	// RetryAfter is the Retry-After of a request refused for want of budget: the largest group
	// calls measured (100,000 entries over JSON) take about 0.6 s, so budget comes free within a second.
	RetryAfter = time.Second
)

// Budget is the heap the admitted requests may hold together.
type Budget struct {
	capacity      int64
	sem           *semaphore.Weighted  // the budget: what is granted, and the calls and records waiting for it
	streams       *semaphore.Weighted  // the streams' half of it (stream.go)
	wait          time.Duration        // how long a call that does not fit waits in its client's queue
	q             queues               // the calls waiting, per client (fair.go)
	clientStreams *shares              // what each client's streams hold of the streams' half
	inUse         prometheus.Gauge     // what sem has granted (a semaphore does not say)
	poolSize      *prometheus.GaugeVec // each front's read pool (readpool.go), by front
	poolInUse     *prometheus.GaugeVec // what the reads hold of it
	refused       prometheus.Counter
	refusals      *prometheus.CounterVec // by front and cause: the operator's one series of refusals
}

// Causes of a refusal, the cause label of yardstick_admission_refusals_total.
const (
	CauseMemoryBudget = "memory_budget" // the request's memory did not fit in the budget
	CauseReadPool     = "read_pool"     // a gRPC message or a JSON body found no room in its read pool in time (body.go)
	CauseReadSlots    = "read_slots"    // a gRPC call without a token found every read slot taken
	CauseClientShare  = "client_share"  // a stream or gRPC read of a client that holds its share (share.go)
)

// New makes a budget of capacity bytes and registers its series in reg.
func New(capacity int64, reg prometheus.Registerer, service string) *Budget {
	labels := prometheus.Labels{"service": service}
	b := &Budget{
		capacity:      capacity,
		sem:           semaphore.NewWeighted(capacity),
		streams:       semaphore.NewWeighted(capacity / 2),
		q:             queues{byClient: map[string][]*waiter{}},
		clientStreams: newShares(),
		inUse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "yardstick_memory_budget_in_use_bytes", Help: "Estimated heap of the admitted large requests.", ConstLabels: labels,
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "yardstick_memory_budget_refused_total", Help: "Requests refused because the memory budget was full.", ConstLabels: labels,
		}),
	}
	b.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "yardstick_admission_refusals_total", Help: "Requests refused before any work, by front (http, grpc) and cause (memory_budget, read_pool, read_slots, client_share).",
		ConstLabels: labels,
	}, []string{"front", "cause"})
	for _, fc := range [][2]string{{"http", CauseMemoryBudget}, {"grpc", CauseMemoryBudget}, {"http", CauseReadPool}, {"grpc", CauseReadPool}, {"grpc", CauseReadSlots},
		{"http", CauseClientShare}, {"grpc", CauseClientShare}} {
		b.refusals.WithLabelValues(fc[0], fc[1]) // at 0 from the start, so that rate() sees the first
	}
	capGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "yardstick_memory_budget_bytes", Help: "The memory budget of large requests.", ConstLabels: labels,
	}, func() float64 { return float64(capacity) })
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "yardstick_memory_budget_queued_requests", Help: "Requests waiting in their client's queue for the memory budget.", ConstLabels: labels,
	}, func() float64 { return float64(b.q.waiting.Load()) })
	b.poolSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "yardstick_read_pool_bytes", Help: "The pool of request bodies (http) and messages (grpc) being read, by front.", ConstLabels: labels,
	}, []string{"front"})
	b.poolInUse = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "yardstick_read_pool_in_use_bytes", Help: "What the bodies and messages being read hold of their read pool, by front.", ConstLabels: labels,
	}, []string{"front"})
	reg.MustRegister(b.inUse, b.refused, b.refusals, capGauge, queued, b.poolSize, b.poolInUse)
	return b
}

// Refuse counts a refusal of front ("http" or "grpc") for cause (one of the Cause constants).
func (b *Budget) Refuse(front, cause string) { b.refusals.WithLabelValues(front, cause).Inc() }

// Grant is one request's share of the budget; Release gives it back (once; nil-safe).
type Grant struct {
	b    *Budget
	cost int64
	once sync.Once
}

// grant records cost, which the caller has acquired from sem.
func (b *Budget) grant(cost int64) *Grant {
	b.inUse.Add(float64(cost))
	return &Grant{b: b, cost: cost}
}

// Release gives the grant back.
func (a *Grant) Release() {
	if a != nil {
		a.once.Do(func() { a.b.give(a.cost) })
	}
}

func (b *Budget) give(n int64) {
	if n <= 0 {
		return
	}
	b.inUse.Sub(float64(n))
	b.sem.Release(n) // the calls waiting first, in their order
}

// AdmitCall admits client's call of cost (Cost, CostOfBody), waiting in the client's queue up to
// the budget's wait; a refusal is counted for front and answered Overloaded.
func (b *Budget) AdmitCall(ctx context.Context, front, client string, cost int64) (*Grant, error) {
	a, ok := b.admit(ctx, client, cost, b.wait)
	if !ok {
		b.Refuse(front, CauseMemoryBudget)
		return nil, rpcerr.Overloaded(RetryAfter)
	}
	return a, nil
}

// Size is the budget: configured when set, else fraction of the memory limit that limit reports,
// else DefaultMemoryBudget; source says which.
func Size(configured int64, fraction float64, limit func() (uint64, error)) (bytes int64, source string) {
	if configured > 0 {
		return configured, "YARDSTICK_MEMORY_BUDGET"
	}
	l, err := limit()
	if err != nil || l == 0 || l >= math.MaxInt64 {
		return DefaultMemoryBudget, "default (no memory limit)"
	}
	return int64(fraction * float64(l)), fmt.Sprintf("%v of the memory limit %d", fraction, l)
}

// SetMemoryLimit sets GOMEMLIMIT to GoMemLimitRatio of the container's memory limit (read from the
// cgroup). A GOMEMLIMIT in the environment wins; no limit leaves it unset. Main calls it once.
func SetMemoryLimit(log *slog.Logger) {
	limit, err := memlimit.Set(memlimit.WithRatio(GoMemLimitRatio), memlimit.WithProvider(memlimit.FromCgroup))
	switch {
	case err != nil && !errors.Is(err, memlimit.ErrNoLimit):
		log.Warn("GOMEMLIMIT not set: the memory limit could not be read", "error", err)
	case limit > 0 && limit < math.MaxInt64:
		log.Info("GOMEMLIMIT set", "bytes", limit)
	}
}
