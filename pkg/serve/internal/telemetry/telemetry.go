// Package telemetry owns what the frame tells about the requests it serves: the Prometheus
// registry and the request series, the service logger (NewLogger: JSON or text, lines batched,
// errors written at once), one log line per request written by one function (Recorder's Write),
// the limit on log lines of refused requests (LogLimiter), request ids and log levels. Both
// fronts report each request here once; new metrics belong here too. Request lines are slog's:
// writing them by hand saved nothing measurable (docs/performance.md, "What was kept").
package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
)

// Recorder writes one server's request lines and metrics, in a registry of its own.
type Recorder struct {
	log      *slog.Logger
	limiter  *LogLimiter
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight [2]prometheus.Gauge // the requests being served, per front (InFlight)
	// series caches each label set's counter and histogram: a vector hashes every label value
	// on every lookup (two lookups per request). Label sets are few: served routes × codes.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct{ front, route, code string }

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// Fronts, the front label's values.
const (
	FrontHTTP = "http"
	FrontGRPC = "grpc"
)

// NewRecorder makes a server's registry (Go, process and request series) and its LogLimiter.
func NewRecorder(log *slog.Logger, service string) *Recorder {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	labels := prometheus.Labels{"service": service}
	t := &Recorder{
		log:      log,
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "yardstick_requests_total", Help: "Requests by front (http or grpc), route and status code.",
			ConstLabels: labels,
		}, []string{"front", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "yardstick_request_duration_seconds", Help: "Request latency by front and route.",
			ConstLabels: labels,
			Buckets:     []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"front", "route"}),
	}
	inFlight := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "yardstick_requests_in_flight", Help: "Requests being served now, by front (http or grpc).", ConstLabels: labels,
	}, []string{"front"})
	t.inFlight = [2]prometheus.Gauge{inFlight.WithLabelValues(FrontHTTP), inFlight.WithLabelValues(FrontGRPC)}
	reg.MustRegister(t.requests, t.latency, inFlight)
	t.limiter = NewLogLimiter(reg, service)
	return t
}

// InFlight is the gauge of the requests front is serving: Inc as one starts, Dec as it ends.
func (t *Recorder) InFlight(front string) prometheus.Gauge {
	if front == FrontGRPC {
		return t.inFlight[1]
	}
	return t.inFlight[0]
}

// Registry is the server's metric registry, which other concerns register in and /metrics serves.
func (t *Recorder) Registry() *prometheus.Registry { return t.registry }

// Limiter limits log lines that are not request lines (a closed connection's, say) like refusals'.
func (t *Recorder) Limiter() *LogLimiter { return t.limiter }

// Line is one request's log line and metrics; a new field of every request line is written in Write.
type Line struct {
	Front     string // FrontHTTP or FrontGRPC
	Route     string
	Method    string // the HTTP method; "" on gRPC
	RequestID string
	ClientID  string
	Code      string // the HTTP status or the gRPC code, as the metric labels it
	Status    int    // the HTTP status; 0 on gRPC
	Failed    bool   // refused or failed: its line is within the log limits (LogLimiter)
	Level     slog.Level
	Took      time.Duration
	Quiet     bool        // counted, not logged (probes and scrapes)
	Extra     []slog.Attr // a stream's counts, written after the line's own fields
}

// Write counts a request and writes its log line: the one place either front's request lines are
// written (ObserveHTTP, the chain's observe step, gRPC calls the chain never sees).
func (t *Recorder) Write(ctx context.Context, l Line) {
	t.observe(l.Front, l.Route, l.Code, l.Took)
	if l.Quiet {
		return
	}
	// suppressed, when not empty (slog leaves that out), counts the lines of its cause dropped before.
	var suppressed slog.Attr
	if l.Failed {
		ok, dropped := t.limiter.Allow(l.Front, l.Code)
		if !ok {
			return
		}
		if dropped > 0 {
			suppressed = slog.Int64("suppressed", dropped)
		}
	}
	// On the stack unless a stream's counts overflow it: a line allocates nothing of its own.
	attrs := make([]slog.Attr, 0, 12)
	msg, outcome := "grpc request", slog.String("code", l.Code)
	attrs = append(attrs, slog.String("request_id", l.RequestID))
	if l.Front == FrontHTTP {
		msg, outcome = "http request", slog.Int("status", l.Status)
		attrs = append(attrs, slog.String("method", l.Method))
	}
	attrs = append(attrs, slog.String("route", l.Route), slog.String("client_id", l.ClientID), outcome,
		slog.Float64("duration_ms", float64(l.Took.Microseconds())/1000), suppressed)
	// The request's trace and span (ours when tracing is on): its line and spans find each other.
	if traceID, spanID, ok := tracing.IDs(ctx); ok {
		attrs = append(attrs, slog.String("trace_id", traceID), slog.String("span_id", spanID))
	}
	logRequest(ctx, t.log, l.Level, msg, append(attrs, l.Extra...)...)
}

// logRequest writes a request's log line without Logger.LogAttrs's walk of the stack for the
// caller's program counter, which only a handler with AddSource prints (NewLogger's never do).
func logRequest(ctx context.Context, log *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

func (t *Recorder) observe(front, route, code string, d time.Duration) {
	k := seriesKey{front, route, code}
	v, ok := t.series.Load(k)
	if !ok {
		v, _ = t.series.LoadOrStore(k, &series{t.requests.WithLabelValues(front, route, code), t.latency.WithLabelValues(front, route)})
	}
	se := v.(*series)
	se.requests.Inc()
	se.latency.Observe(d.Seconds())
}
