package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// The log lines of one cause (front and code): a burst, then a few a second.
const (
	logBurst     = 20
	logPerSecond = 5
)

// LogLimiter limits the log lines of refused and failed requests with a token bucket per cause (a
// front times its codes: few); every request is still counted, and an answered one always logged.
// One client resetting HTTP/2 streams as fast as it could once wrote 21 MB of log lines a second.
type LogLimiter struct {
	mu         sync.Mutex
	causes     map[logCause]*logBucket
	suppressed *prometheus.CounterVec
	now        func() time.Time
}

type logCause struct{ front, code string }

type logBucket struct {
	bucket     *rate.Limiter
	suppressed int64 // lines dropped since the last one written
}

// NewLogLimiter makes a limiter whose dropped lines are counted in reg.
func NewLogLimiter(reg prometheus.Registerer, service string) *LogLimiter {
	l := &LogLimiter{
		causes: map[logCause]*logBucket{},
		suppressed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "yardstick_log_lines_suppressed_total",
			Help:        "Request log lines not written because their cause (front and code) wrote more than 5 a second; the requests are still counted in yardstick_requests_total.",
			ConstLabels: prometheus.Labels{"service": service},
		}, []string{"front", "code"}),
		now: time.Now,
	}
	reg.MustRegister(l.suppressed)
	// Every cause at 0 from the start: rate() sees the first suppression, no dashboard needs "or 0".
	for code := codes.Canceled; code <= codes.Unauthenticated; code++ { // every code but OK
		l.suppressed.WithLabelValues("grpc", code.String())
	}
	for _, code := range limitedHTTPCodes {
		l.suppressed.WithLabelValues("http", code)
	}
	return l
}

// limitedHTTPCodes are the statuses of 400 and over the front answers (rpcerr's, 408 of a slow body).
var limitedHTTPCodes = []string{"400", "401", "403", "404", "405", "408", "413", "415", "429", "500", "503"}

// Allow reports whether a line of cause may be written now, and how many were dropped before it.
func (l *LogLimiter) Allow(front, code string) (ok bool, dropped int64) {
	k := logCause{front, code}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.causes[k]
	if b == nil {
		b = &logBucket{bucket: rate.NewLimiter(logPerSecond, logBurst)}
		l.causes[k] = b
	}
	if !b.bucket.AllowN(now, 1) {
		b.suppressed++
		l.suppressed.WithLabelValues(front, code).Inc()
		return false, 0
	}
	dropped, b.suppressed = b.suppressed, 0
	return true, dropped
}
