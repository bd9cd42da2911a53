// Package admission is the memory budget. A group forecast of 100,000 students holds about 85 MB
// of heap while it runs; twenty at once took a process to 2 GiB. So every request whose cost grows
// with its size takes its estimated heap from the budget once its body is read (JSON) or before
// it is decoded (gRPC), and gives it back when answered; a request that does not fit waits in its
// client's queue (fair.go), then is answered 503 (gRPC ResourceExhausted) with Retry-After. The
// package owns the cost model, the budget's size, GOMEMLIMIT, the streams' admission (stream.go),
// the JSON body pool (body.go) and the gRPC read pool (readpool.go).
//
// The budget is a share of the container's memory limit (MemoryBudgetFraction, default 0.5), so
// the requests admitted, the process's baseline and the small requests all fit under GOMEMLIMIT.
// Small requests skip it: a body under 64 KiB on a route other than the group forecasts costs at
// most a few MB (measured: 0.7 MB for a 64 KiB scoring body, 2.5 MB for the worst shape), of the
// order of a connection's own buffers, and scoring must not be refused while a few large group
// forecasts fill the budget. Group forecasts are always admitted: a few KiB of `{}` students
// already cost megabytes.
//
// The budget, the streams' half of it and the read pool are weighted semaphores, whose strict FIFO
// keeps a large call from being starved by small ones; fair.go orders the calls by client.
package admission

import (
	"bytes"
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
	SmallRequestBytes = 64 << 10        // smaller bodies of routes but the group forecasts skip the budget
	// RetryAfter is the Retry-After of a request refused for want of budget: a 100,000-student
	// group forecast over JSON takes about 0.6 s, so budget comes free within a second.
	RetryAfter = time.Second
)

// Cost model: heap bytes per body byte (group forecasts: at least a fixed amount per student, up to
// the student limit), measured with the garbage collector off; services/forecast's
// TestBudgetCoversTheRealHandler fails when a factor no longer covers what it measures. A JSON
// student `[1,1,1]` costs what a 60-byte object does, so a JSON group is costed by the students its
// body can hold at most.
const (
	groupJSONPerByte     = 16        // measured 14.7 (100,000 typical object students: 6.1 MB of body, 89.6 MB of heap)
	groupJSONPerStudent  = 1000      // measured 896 per object student, 848 per array student (85 MB for 100,000)
	minStudentJSONBytes  = 8         // `[1,1,1],`; `{},` is shorter but costs 290
	groupGRPCPerByte     = 24        // measured 20.0, client included (100,000 students: 2.9 MB, 58 MB)
	groupGRPCPerStudent  = 320       // empty students: 290 each over gRPC
	groupBase            = 256 << 10 // per call, whatever its size (measured about 70 KB)
	minStudentProtoBytes = 2         // an empty StudentData: tag and length
	otherPerByte         = 30        // scoring and single forecasts, 64 KiB to 1 MiB: 28 at worst
)

// Budget is the heap the admitted requests may hold together.
type Budget struct {
	capacity      int64
	maxStudents   int64                // the student limit: a group forecast costs at most this many students
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
func New(capacity int64, maxStudents int, reg prometheus.Registerer, service string) *Budget {
	labels := prometheus.Labels{"service": service}
	b := &Budget{
		capacity:      capacity,
		maxStudents:   int64(maxStudents),
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

// Cost is the estimated heap of a request of n body bytes (JSON bytes when json, else protobuf
// bytes), on a group forecast's route when group. Small requests of other routes cost nothing.
func (b *Budget) Cost(group bool, n int64, json bool) int64 {
	if !group {
		if n < SmallRequestBytes {
			return 0
		}
		return otherPerByte * n
	}
	perByte, perStudent, minStudent := int64(groupGRPCPerByte), int64(groupGRPCPerStudent), int64(minStudentProtoBytes)
	if json {
		perByte, perStudent, minStudent = groupJSONPerByte, groupJSONPerStudent, minStudentJSONBytes
	}
	return b.groupCost(n, perByte, perStudent, n/minStudent)
}

func (b *Budget) groupCost(n, perByte, perStudent, students int64) int64 {
	return groupBase + max(perByte*n, perStudent*min(students, b.maxStudents))
}

// CostOfBody is the cost of a JSON body once read: on a group forecast's route (group), bounded by
// its students, as every student opens with a bracket, and never more than the cost from its size.
func (b *Budget) CostOfBody(group bool, body []byte) int64 {
	n := int64(len(body))
	if !group {
		return b.Cost(false, n, true)
	}
	brackets := bytes.Count(body, []byte{'['}) + bytes.Count(body, []byte{'{'})
	students := min(int64(brackets), n/minStudentJSONBytes)
	return b.groupCost(n, groupJSONPerByte, groupJSONPerStudent, students)
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
