// Package telemetry owns what the frame tells about the requests it serves: the Prometheus
// registry and the request series (Metrics), the service logger (NewLogger: JSON or text, lines
// batched, errors written at once), one log line per request written by one function (Recorder's
// Write), the limit on log lines of refused requests (LogLimiter), request ids and log levels.
// Both fronts report each request here once; new metrics belong here too.
package telemetry

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
)

// Recorder writes the request lines and metrics of one server.
type Recorder struct {
	log     *slog.Logger
	metrics *Metrics
	limiter *LogLimiter // nil: every line is written
}

// NewRecorder makes a server's metrics (a registry of its own) and the limiter of its refusals'
// log lines, which log writes to.
func NewRecorder(log *slog.Logger, service string) *Recorder {
	m := NewMetrics(service)
	return &Recorder{log: log, metrics: m, limiter: NewLogLimiter(m.registry, service)}
}

// InFlight is the gauge of the requests front ("http" or "grpc") is serving.
func (t *Recorder) InFlight(front string) prometheus.Gauge { return t.metrics.InFlight(front) }

// Registry is the server's metric registry: other concerns register their series in it, and
// /metrics serves it.
func (t *Recorder) Registry() *prometheus.Registry { return t.metrics.registry }

// Limiter limits log lines that are not request lines (a closed connection's, say) like refusals'.
func (t *Recorder) Limiter() *LogLimiter { return t.limiter }

// Log is the service logger.
func (t *Recorder) Log() *slog.Logger { return t.log }

// Line is one request's log line and metrics. A new field of every request line is added here
// and written in Write.
type Line struct {
	Front     string // "http" or "grpc"
	Route     string
	Method    string // the HTTP method; "" on gRPC
	RequestID string
	ClientID  string
	Code      string // the HTTP status or the gRPC code, as the metric labels it
	Status    int    // the HTTP status; 0 on gRPC
	Failed    bool   // refused or failed: its line is within the log limits (LogLimiter)
	Level     slog.Level
	Took      time.Duration
	Quiet     bool // counted, not logged (probes and scrapes)

	// Extra is a stream's counts (issue 21), written after the line's own fields.
	Extra []slog.Attr
}

// Write counts a request in the metrics and writes its log line: the one place either front's
// request lines are written (ObserveHTTP, the chain's observe step, and the gRPC calls the chain
// never sees: refused on their headers, ended before a handler, streams).
func (t *Recorder) Write(ctx context.Context, l Line) {
	t.metrics.Observe(l.Front, l.Route, l.Code, l.Took)
	if l.Quiet {
		return
	}
	suppressed, ok := t.logAllowed(l.Front, l.Failed, l.Code)
	if !ok {
		return
	}
	duration := slog.Float64("duration_ms", float64(l.Took.Microseconds())/1000)
	// The request's trace and span (ours when tracing is on), so that its line and its spans can
	// be found from each other, and a stream's counts: after the line's own fields.
	extra := l.Extra
	if traceID, spanID, ok := tracing.IDs(ctx); ok {
		extra = append([]slog.Attr{slog.String("trace_id", traceID), slog.String("span_id", spanID)}, extra...)
	}
	if l.Front == "http" {
		if len(extra) == 0 {
			logRequest(ctx, t.log, l.Level, "http request", slog.String("request_id", l.RequestID), slog.String("method", l.Method),
				slog.String("route", l.Route), slog.String("client_id", l.ClientID), slog.Int("status", l.Status), duration, suppressed)
			return
		}
		logRequest(ctx, t.log, l.Level, "http request", append([]slog.Attr{slog.String("request_id", l.RequestID), slog.String("method", l.Method),
			slog.String("route", l.Route), slog.String("client_id", l.ClientID), slog.Int("status", l.Status), duration, suppressed}, extra...)...)
		return
	}
	if len(extra) == 0 {
		logRequest(ctx, t.log, l.Level, "grpc request", slog.String("request_id", l.RequestID), slog.String("route", l.Route),
			slog.String("client_id", l.ClientID), slog.String("code", l.Code), duration, suppressed)
		return
	}
	logRequest(ctx, t.log, l.Level, "grpc request", append([]slog.Attr{slog.String("request_id", l.RequestID), slog.String("route", l.Route),
		slog.String("client_id", l.ClientID), slog.String("code", l.Code), duration, suppressed}, extra...)...)
}
