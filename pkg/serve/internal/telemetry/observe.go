package telemetry

import (
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// RequestIDHeader carries a request id both ways (HTTP X-Request-Id, gRPC metadata).
const RequestIDHeader = "x-request-id"

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// newRequestID makes a 24-hex-digit id. Ids correlate log lines and are not secrets: the runtime's
// fast generator serves (crypto/rand costs a system call per request).
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.EncodeToString(b[:])
}

// RequestIDFrom keeps a caller's sane request id (they correlate their logs with ours) or makes one.
func RequestIDFrom(v string) string {
	if validRequestID.MatchString(v) {
		return v
	}
	return newRequestID()
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 && (code < 100 || code > 199) { // an interim answer (100 Continue) is not the status
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

// codeText is code as text, without strconv.Itoa's allocation for a status net/http can write.
func codeText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

var statusTexts = func() (t [1000]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// observed is what ObserveHTTP keeps of one request, in one allocation rather than three.
type observed struct {
	ri  reqinfo.Info
	rec statusRecorder
	id  [1]string
}

// Unwrap lets http.ResponseController reach the connection (read deadlines, httpfront.PaceBodies).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ObserveHTTP wraps the whole HTTP front: request id, panic recovery, one log line and the metrics
// of every request (never bodies, headers, secrets or tokens); label bounds the route label.
func (t *Recorder) ObserveHTTP(label func(path string) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if p := r.URL.Path; len(p) > 1 && p[len(p)-1] == '/' {
			// A trailing slash on a documented path is the same path (the original API's clients send both).
			r.URL.Path, r.URL.RawPath = p[:len(p)-1], ""
		}
		o := &observed{ri: reqinfo.Info{ID: RequestIDFrom(r.Header.Get("X-Request-Id")), Route: label(r.URL.Path)},
			rec: statusRecorder{ResponseWriter: w}}
		ri, rec := &o.ri, &o.rec
		o.id[0] = ri.ID
		w.Header()["X-Request-Id"] = o.id[:] // as Header().Set, the key canonical already
		ctx := reqinfo.With(r.Context(), ri)
		inFlight := t.inFlight[0]
		inFlight.Inc()
		defer func() {
			inFlight.Dec()
			// The request's one net, the frame's code and the handler's (the chain has none): the
			// documented 500 and the request's line, not net/http's cut connection and a 200 line.
			if p := recover(); p != nil {
				t.log.ErrorContext(ctx, "panic in http handler", "request_id", ri.ID, "route", ri.Route, "panic", p, "stack", string(debug.Stack()))
				if rec.code == 0 {
					rpcerr.Write(rec, rpcerr.HTTP{Status: http.StatusInternalServerError, Body: rpcerr.BodyFor(http.StatusInternalServerError, nil)})
				}
			}
			code := rec.code
			if code == 0 {
				code = http.StatusOK
			}
			t.Write(ctx, Line{Front: FrontHTTP, Route: ri.Route, Method: r.Method, RequestID: ri.ID, ClientID: ri.ClientID,
				Code: codeText(code), Status: code, Failed: code >= 400, Level: HTTPLevel(code), Took: time.Since(start),
				Quiet: ri.Route == "/healthz" || ri.Route == "/readyz" || ri.Route == "/metrics", // probes and scrapes every few seconds would drown the log
				Extra: ri.Stream})
		}()
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// HTTPLevel is GRPCLevel's rule for HTTP statuses; shedding load (budget, logins, draining) is 503.
func HTTPLevel(status int) slog.Level {
	switch {
	case status < 500:
		return slog.LevelInfo
	case status == 503:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// GRPCLevel is a gRPC call's log level, on every path that logs one: a caller's mistakes, refusals
// and leaving are information, shedding load or running out of time a warning, our faults errors.
func GRPCLevel(code codes.Code) slog.Level {
	switch code {
	case codes.OK, codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied, codes.Canceled:
		return slog.LevelInfo
	case codes.ResourceExhausted, codes.DeadlineExceeded:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
