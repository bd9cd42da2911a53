package serve

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

const requestIDHeader = "x-request-id"

// metrics are the Prometheus series of one server.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// series caches each label set's counter and histogram: a vector hashes every label value
	// on every lookup (two lookups per request). Label sets are few: served routes × codes.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct{ front, route, code string }

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func newMetrics(service string) *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	labels := prometheus.Labels{"service": service}
	m := &metrics{
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
	reg.MustRegister(m.requests, m.latency)
	return m
}

func (m *metrics) observe(front, route, code string, d time.Duration) {
	k := seriesKey{front, route, code}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &series{m.requests.WithLabelValues(front, route, code), m.latency.WithLabelValues(front, route)})
	}
	se := v.(*series)
	se.requests.Inc()
	se.latency.Observe(d.Seconds())
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// newRequestID makes a 24-hex-digit id. Ids correlate log lines; they are not secrets, so the
// runtime's fast generator serves (crypto/rand costs a system call per request).
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.EncodeToString(b[:])
}

// requestIDFrom keeps a caller's request id when it is sane, so callers can correlate their logs
// with ours, and makes a new one otherwise.
func requestIDFrom(v string) string {
	if validRequestID.MatchString(v) {
		return v
	}
	return newRequestID()
}

// noteClient records the authenticated client for the request's log line.
func noteClient(ctx context.Context, clientID string) {
	if ri := reqinfo.From(ctx); ri != nil {
		ri.ClientID = clientID
	}
}

// streamInterceptor guards the streaming methods (health watch, reflection): same rules, no body.
func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, start := ss.Context(), time.Now()
	call := grpcCallFrom(ctx)
	s.markLogged(call) // this function logs and counts it, not the sweep of ended calls
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in stream handler", "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			err = rpcerr.Internal()
		}
		md, _ := metadata.FromIncomingContext(ctx)
		s.logGRPCCall(ctx, md, info.FullMethod, clientIDOf(ctx), err, time.Since(start))
	}()
	if !tapAuthorized(ctx, call, info.FullMethod) {
		if _, err := s.authorize(ctx, info.FullMethod, bearerToken(ctx)); err != nil {
			return err
		}
	}
	guarded, stop := s.guardStream(ss, info)
	defer stop()
	return handler(srv, guarded)
}

// statusRecorder remembers the status code an HTTP handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// codeText is code as text (the metric label and the log limiter's cause).
func (r *statusRecorder) codeText(code int) string { return strconv.Itoa(code) }

// Unwrap lets http.ResponseController reach the connection (read deadlines, bodyrate.go).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// observeHTTP wraps the whole HTTP front: request id, panic recovery, one log line and the metrics
// of every request. It never logs bodies, headers, secrets or tokens.
func (s *Server) observeHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if p := r.URL.Path; len(p) > 1 && p[len(p)-1] == '/' {
			// A trailing slash on a documented path is the same path (clients of the original
			// API send both).
			r.URL.Path, r.URL.RawPath = p[:len(p)-1], ""
		}
		ri := &reqinfo.Info{ID: requestIDFrom(r.Header.Get("X-Request-Id")), Route: s.routes.Label(r.URL.Path)}
		w.Header().Set("X-Request-Id", ri.ID)
		ctx := reqinfo.With(r.Context(), ri)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.log.ErrorContext(ctx, "panic in http handler", "request_id", ri.ID, "route", ri.Route, "panic", p, "stack", string(debug.Stack()))
				if rec.code == 0 {
					rpcerr.Write(rec, rpcerr.HTTP{Status: http.StatusInternalServerError, Body: rpcerr.BodyFor(http.StatusInternalServerError, nil)})
				}
			}
			code := rec.code
			if code == 0 {
				code = http.StatusOK
			}
			s.writeRequestLine(ctx, requestLine{front: "http", route: ri.Route, method: r.Method, requestID: ri.ID, clientID: ri.ClientID,
				code: rec.codeText(code), status: code, failed: code >= 400, level: httpLogLevel(code), took: time.Since(start),
				quiet: ri.Route == "/healthz" || ri.Route == "/readyz" || ri.Route == "/metrics"}) // probes and scrapes every few seconds would drown the log
		}()
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// httpLogLevel is grpcLogLevel's rule for HTTP statuses: a caller's mistakes and refusals are
// information, shedding load (503: the budget full, logins queued too long, draining) a warning,
// other faults of ours errors.
func httpLogLevel(status int) slog.Level {
	switch {
	case status < 500:
		return slog.LevelInfo
	case status == 503:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
