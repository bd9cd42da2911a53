package serve

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// The admission budget. A group forecast of 100,000 students holds about 85 MB of heap while it
// runs; twenty at once took a process to 2 GiB. Every request whose cost grows with its size is
// therefore admitted against a memory budget before its body is read (JSON) or handled (gRPC):
// its estimated cost is taken from the budget and given back when it is answered, and a request
// that does not fit is answered at once with 503 (gRPC ResourceExhausted) and Retry-After.
//
// The budget is a share of the container's memory limit (MemoryBudgetFraction, default 0.5;
// GOMEMLIMIT is set to 0.9 of the limit), so the requests admitted, the process's own baseline and
// the small requests that skip the budget all fit under the limit with room for the garbage
// collector to work. Small requests skip it: a body under 64 KiB on a route other than the group
// forecasts costs at most a few MB (measured: 0.7 MB for a 64 KiB scoring body, 2.5 MB for the
// worst shape), of the order of a connection's own buffers, which no budget meters either; and
// scoring traffic must not be refused while a few large group forecasts fill the budget. Group
// forecasts are always admitted: a few KiB of `{}` students already cost megabytes.

// DefaultMemoryBudget is the budget when the process has no memory limit (make run, tests).
const DefaultMemoryBudget = 512 << 20

const (
	// goMemLimitRatio is the share of the container's memory limit GOMEMLIMIT is set to: the
	// garbage collector works harder as the heap nears it, instead of the kernel killing the pod.
	goMemLimitRatio = 0.9
	// maxBudgetFraction keeps the budget under GOMEMLIMIT.
	maxBudgetFraction = goMemLimitRatio
	// smallRequestBytes: smaller bodies of routes other than group forecasts skip the budget.
	smallRequestBytes = 64 << 10
	// budgetRetryAfter is the Retry-After of a request refused for want of budget: a 100,000-student
	// group forecast over JSON takes about 0.6 s, so budget comes free within a second.
	budgetRetryAfter = time.Second
)

// Cost model: heap bytes a request allocates from its body size, measured with the garbage
// collector off (TestCostCoversHeapGrowth, budget_cost_test.go, which fails when a factor no
// longer covers what it measures). Group forecasts cost per body byte, and at least a fixed amount
// per student however few bytes the student takes, up to the student limit; every other route
// costs per body byte. In JSON a student may be an object or a compact array, and the array is
// the costlier per byte: `[1,1,1]` (8 bytes with its comma) costs what a full object of 60 bytes
// does. So before the body is read a JSON group is costed as if every 8 bytes were a student, and
// once it is read, by how many students it can hold at most (groupCostOfBody: one bracket each).
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

// budget is the heap the admitted requests may hold together.
type budget struct {
	capacity int64
	mu       sync.Mutex
	used     int64
	inUse    prometheus.Gauge
	refused  prometheus.Counter
}

func newBudget(capacity int64, reg prometheus.Registerer, service string) *budget {
	labels := prometheus.Labels{"service": service}
	b := &budget{
		capacity: capacity,
		inUse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "yardstick_memory_budget_in_use_bytes", Help: "Estimated heap of the admitted large requests.", ConstLabels: labels,
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "yardstick_memory_budget_refused_total", Help: "Requests refused because the memory budget was full.", ConstLabels: labels,
		}),
	}
	capGauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "yardstick_memory_budget_bytes", Help: "The memory budget of large requests.", ConstLabels: labels,
	})
	capGauge.Set(float64(capacity))
	reg.MustRegister(b.inUse, b.refused, capGauge)
	return b
}

// admission is one request's share of the budget; release gives it back (once; nil-safe).
type admission struct {
	b    *budget
	cost int64
	once sync.Once
}

// admit takes cost from the budget, or reports that it does not fit. A cost of 0 takes nothing,
// and its admission is nil (most requests: no allocation).
func (b *budget) admit(cost int64) (*admission, bool) {
	cost = min(cost, b.capacity) // a request larger than the whole budget runs alone
	if cost <= 0 {
		return nil, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+cost > b.capacity {
		b.refused.Inc()
		return nil, false
	}
	b.used += cost
	b.inUse.Set(float64(b.used))
	return &admission{b: b, cost: cost}, true
}

// shrink lowers the admitted cost to cost (a body sent without Content-Length was admitted at the
// route's limit until its real size was known).
func (a *admission) shrink(cost int64) {
	if a == nil || cost >= a.cost {
		return
	}
	a.b.give(a.cost - max(cost, 0))
	a.cost = max(cost, 0)
}

func (a *admission) release() {
	if a == nil {
		return
	}
	a.once.Do(func() { a.b.give(a.cost) })
}

func (b *budget) give(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.inUse.Set(float64(b.used))
	b.mu.Unlock()
}

// inUse is the admitted total (tests).
func (b *budget) admitted() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// cost is the estimated heap of a request of n body bytes on method: JSON bytes when json, else
// protobuf bytes. Small requests of routes other than the group forecasts cost nothing (above).
func (s *Server) cost(method string, n int64, json bool) int64 {
	if r := s.routes.ByMethod[method]; r == nil || !r.Group {
		if n < smallRequestBytes {
			return 0
		}
		return otherPerByte * n
	}
	perByte, perStudent, minStudent := int64(groupGRPCPerByte), int64(groupGRPCPerStudent), int64(minStudentProtoBytes)
	if json {
		perByte, perStudent, minStudent = groupJSONPerByte, groupJSONPerStudent, minStudentJSONBytes
	}
	return s.groupCost(n, perByte, perStudent, n/minStudent)
}

// groupCost is a group forecast's cost: per byte, or per student up to the student limit.
func (s *Server) groupCost(n, perByte, perStudent, students int64) int64 {
	return groupBase + max(perByte*n, perStudent*min(students, int64(s.cfg.Limits.MaxStudents)))
}

// groupCostOfBody is the cost of a JSON group forecast body once read: every student, object or
// array, opens with a bracket, so the brackets bound how many students it holds (a bound, never an
// undercount: strings may hold brackets too). It is never more than the cost from the body's size.
func (s *Server) groupCostOfBody(body []byte) int64 {
	n := int64(len(body))
	brackets := bytes.Count(body, []byte{'['}) + bytes.Count(body, []byte{'{'})
	students := min(int64(brackets), n/minStudentJSONBytes)
	return s.groupCost(n, groupJSONPerByte, groupJSONPerStudent, students)
}

// Cost is the admission budget's estimate, in bytes of heap, of a request of n body bytes on the
// rpc fullMethod (JSON bytes when json, else protobuf bytes): what a test holds against the real
// heap growth of the service's handler, and what capacity planning can read.
func (s *Server) Cost(fullMethod string, n int64, json bool) int64 {
	return s.cost(fullMethod, n, json)
}

// admitJSON admits a JSON front request before its body is read: by its Content-Length, or by the
// route's limit when it sent none (shrunk once the body is read).
func (s *Server) admitJSON(method string, contentLength, limit int64) (*admission, error) {
	n := contentLength
	if n < 0 {
		n = limit
	}
	a, ok := s.budget.admit(s.cost(method, n, true))
	if !ok {
		return nil, rpcerr.Overloaded(budgetRetryAfter)
	}
	return a, nil
}

// admitDecode admits the decoding of a gRPC call's request message by its size, as the codec read
// it (0 when it is under sizedFrom: the codec noted no size).
func (s *Server) admitDecode(method string, size int64) (*admission, error) {
	a, ok := s.budget.admit(s.cost(method, size, false))
	if !ok {
		return nil, rpcerr.Overloaded(budgetRetryAfter)
	}
	return a, nil
}

// sizedFrom is the smallest request, in protobuf bytes, whose size the budget counts on method:
// any group forecast, else smallRequestBytes (smaller requests cost nothing).
func (s *Server) sizedFrom(method string) int64 {
	if r := s.routes.ByMethod[method]; r != nil && r.Group {
		return 0
	}
	return smallRequestBytes
}

// memoryBudget is the configured budget, or MemoryBudgetFraction of the memory limit that limit
// reports (the container's), or DefaultMemoryBudget when there is none; source says which.
func memoryBudget(cfg Config, limit func() (uint64, error)) (bytes int64, source string) {
	if cfg.MemoryBudget > 0 {
		return cfg.MemoryBudget, "YARDSTICK_MEMORY_BUDGET"
	}
	l, err := limit()
	if err != nil || l == 0 || l >= math.MaxInt64 {
		return DefaultMemoryBudget, "default (no memory limit)"
	}
	return int64(cfg.MemoryBudgetFraction * float64(l)), fmt.Sprintf("%v of the memory limit %d", cfg.MemoryBudgetFraction, l)
}

// setMemoryLimit sets GOMEMLIMIT to 0.9 of the container's memory limit (read from the cgroup), so
// the garbage collector works harder near the limit instead of the kernel killing the process. A
// GOMEMLIMIT in the environment wins; no limit leaves it unset. Main calls it once per process.
func setMemoryLimit(log *slog.Logger) {
	limit, err := memlimit.Set(memlimit.WithRatio(goMemLimitRatio), memlimit.WithProvider(memlimit.FromCgroup))
	switch {
	case err != nil && !errors.Is(err, memlimit.ErrNoLimit):
		log.Warn("GOMEMLIMIT not set: the memory limit could not be read", "error", err)
	case limit > 0 && limit < math.MaxInt64:
		log.Info("GOMEMLIMIT set", "bytes", limit)
	}
}
