package tracing

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		env      map[string]string
		on       bool
		protocol string
		err      bool
	}{
		{"nothing set: off", nil, false, "", false},
		{"a protocol but no endpoint: off", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "", false},
		{"endpoint: on, http/protobuf by default", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, "http/protobuf", false},
		{"traces endpoint alone", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, "http/protobuf", false},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc", false},
		{"the traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, true, "grpc", false},
		{"SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_SDK_DISABLED": "true"}, false, "", false},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_TRACES_EXPORTER": "none"}, false, "", false},
		{"exporter otlp", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_TRACES_EXPORTER": "otlp"}, true, "http/protobuf", false},
		{"exporter zipkin: refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_TRACES_EXPORTER": "zipkin"}, false, "", true},
		{"http/json: refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			on, protocol, err := settings(func(k string) string { return tc.env[k] })
			if on != tc.on || protocol != tc.protocol || (err != nil) != tc.err {
				t.Errorf("got %v %q %v; want %v %q, error %v", on, protocol, err, tc.on, tc.protocol, tc.err)
			}
		})
	}
}

// TestOffCostsNothing: off, there is no stats handler, the JSON front is not wrapped, and the
// SDK has nothing to shut down.
func TestOffCostsNothing(t *testing.T) {
	t.Parallel()
	tr, err := newFrom(context.Background(), "scoring", "v1", func(string) string { return "" })
	if err != nil || tr.Enabled() || tr.ServerHandler() != nil {
		t.Fatalf("got %v, enabled %v; want off with no stats handler", err, tr.Enabled())
	}
	next := http.NewServeMux() // a comparable handler
	if got := tr.HTTPHandler(func(string) string { return "/api/x" }, next); got != next {
		t.Errorf("off: HTTPHandler wrapped the front (%T); want it unchanged", got)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// receiver is a real OTLP trace receiver: the collector's own generated gRPC service, or its
// HTTP path /v1/traces with protobuf bodies.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
	names []string // service.name of each span's resource
}

func (rc *receiver) add(req *collectortrace.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				rc.spans = append(rc.spans, s)
				rc.names = append(rc.names, service)
			}
		}
	}
}

func (rc *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	rc.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	rc.add(&req)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (rc *receiver) got() ([]*tracepb.Span, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...), append([]string(nil), rc.names...)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// TestExport: over each protocol, to a real receiver on loopback, a JSON request and a gRPC
// call that carried a traceparent come back as server spans whose parent is the caller's span,
// in the caller's trace, named by route and by rpc, with the status; the log line's ids are
// the exported span's.
func TestExport(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			rc, l := startReceiver(t, protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			t.Setenv("OTEL_SERVICE_NAME", "scoring-eu")
			tr, err := New(context.Background(), "scoring", "v1.2.3")
			if err != nil || !tr.Enabled() {
				t.Fatalf("New: %v, enabled %v; want on", err, tr.Enabled())
			}
			traceparent := "00-" + callerTrace + "-" + callerSpan + "-01"

			// The JSON front's spans, from otelhttp: a known route that fails (5xx), one that
			// refuses (4xx), and a path that is no route.
			jsonIDs := serveJSONSpans(t, tr, traceparent)

			// A direct gRPC call's span, from the stats handler.
			gl := listen(t)
			// WaitForHandlers: Stop returns once the call's stats handler has ended its span, which
			// it does after the answer is sent, so after the client may have returned.
			gs := grpc.NewServer(grpc.StatsHandler(tr.ServerHandler()), grpc.WaitForHandlers(true))
			var grpcIDs [2]string
			hs := health.NewServer()
			healthpb.RegisterHealthServer(gs, idsHealth{hs, &grpcIDs})
			go gs.Serve(gl)
			t.Cleanup(gs.Stop)
			conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			cctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", traceparent)
			if _, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			ctxTimeout, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			gs.Stop()
			if err := tr.Shutdown(ctxTimeout); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}

			spans, services := rc.got()
			byName := map[string]*tracepb.Span{}
			for i, s := range spans {
				byName[s.GetName()] = s
				if services[i] != "scoring-eu" {
					t.Errorf("span %q: service.name %q; want OTEL_SERVICE_NAME's scoring-eu", s.GetName(), services[i])
				}
			}
			for _, want := range []struct {
				name   string
				status tracepb.Status_StatusCode
				spanID string
			}{
				{"POST /api/score/items", tracepb.Status_STATUS_CODE_ERROR, jsonIDs[0][1]},   // 5xx: the server's error
				{"POST /api/score/strands", tracepb.Status_STATUS_CODE_UNSET, jsonIDs[1][1]}, // 4xx: the caller's
				{"POST", tracepb.Status_STATUS_CODE_UNSET, jsonIDs[2][1]},                    // no route: the method alone
				{"grpc.health.v1.Health/Check", tracepb.Status_STATUS_CODE_UNSET, grpcIDs[1]},
			} {
				s, ok := byName[want.name]
				if !ok {
					t.Errorf("no span %q among %d exported", want.name, len(spans))
					continue
				}
				if got := hex.EncodeToString(s.GetTraceId()); got != callerTrace {
					t.Errorf("%s: trace %s; want the caller's %s", want.name, got, callerTrace)
				}
				if got := hex.EncodeToString(s.GetParentSpanId()); got != callerSpan {
					t.Errorf("%s: parent %s; want the caller's span %s", want.name, got, callerSpan)
				}
				if got := hex.EncodeToString(s.GetSpanId()); got != want.spanID {
					t.Errorf("%s: span id %s; want %s, the one the handler's context (and so its log line) had", want.name, got, want.spanID)
				}
				if s.GetKind() != tracepb.Span_SPAN_KIND_SERVER || s.GetStatus().GetCode() != want.status {
					t.Errorf("%s: kind %v, status %v; want server, %v", want.name, s.GetKind(), s.GetStatus().GetCode(), want.status)
				}
			}
			if s := byName["POST /api/score/items"]; s != nil {
				if len(s.GetEvents()) != 1 || s.GetEvents()[0].GetName() != "admitted" {
					t.Errorf("JSON span events: got %v; want one, admitted", s.GetEvents())
				}
				attrs := map[string]string{}
				for _, a := range s.GetAttributes() {
					attrs[a.GetKey()] = a.GetValue().String()
				}
				for _, k := range []string{"http.request.method", "http.route", "http.response.status_code", "url.path", "url.scheme",
					"network.protocol.version", "client.address"} {
					if attrs[k] == "" {
						t.Errorf("JSON span has no %s attribute (has %v)", k, attrs)
					}
				}
				// httptest's connection address is 192.0.2.1:1234.
				if got, want := s.GetAttributes(), "192.0.2.1"; !hasString(got, "client.address", want) {
					t.Errorf("JSON span client.address: got %v; want the connection's %s, not X-Forwarded-For's", attrs["client.address"], want)
				}
			}
		})
	}
}

// idsHealth answers health checks and notes the trace and span ids its context carried.
type idsHealth struct {
	*health.Server
	ids *[2]string
}

func (h idsHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.ids[0], h.ids[1], _ = IDs(ctx)
	return h.Server.Check(ctx, req)
}

// TestOffAllocatesNothing: off, a call's phase events allocate nothing (the package's promise
// that off costs nothing per call).
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		Event(ctx, "decoded")
		EventInt(ctx, "admitted and read", "body.bytes", 1234)
	}); n != 0 {
		t.Errorf("got %v allocations a request with tracing off; want 0", n)
	}
}

// hasString reports whether attrs hold key with the string value want.
func hasString(attrs []*commonpb.KeyValue, key, want string) bool {
	for _, a := range attrs {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue() == want
		}
	}
	return false
}

// startReceiver is an OTLP receiver over protocol on loopback, until the test ends.
func startReceiver(t *testing.T, protocol string) (*receiver, net.Listener) {
	t.Helper()
	rc := &receiver{}
	l := listen(t)
	if protocol == "grpc" {
		gs := grpc.NewServer()
		collectortrace.RegisterTraceServiceServer(gs, rc)
		go gs.Serve(l)
		t.Cleanup(gs.Stop)
	} else {
		hs := &http.Server{Handler: rc}
		go hs.Serve(l)
		t.Cleanup(func() { hs.Close() })
	}
	return rc, l
}

// serveJSONSpans serves three requests carrying traceparent through tr's HTTP handler: a known
// route that fails (5xx), one that refuses (4xx), and a path that is no route; it returns the
// ids each request's log line would carry.
func serveJSONSpans(t *testing.T, tr *Tracing, traceparent string) [3][2]string {
	t.Helper()
	var jsonIDs [3][2]string
	front := tr.HTTPHandler(func(path string) string {
		if path == "/api/unknown" {
			return ""
		}
		return path
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Event(r.Context(), "admitted")
		i := map[string]int{"/api/score/items": 0, "/api/score/strands": 1, "/api/unknown": 2}[r.URL.Path]
		jsonIDs[i][0], jsonIDs[i][1], _ = IDs(r.Context())
		w.WriteHeader(map[int]int{0: 503, 1: 400, 2: 404}[i])
	}))
	for _, path := range []string{"/api/score/items", "/api/score/strands", "/api/unknown"} {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		r.Header.Set("traceparent", traceparent)
		r.Header.Set("X-Forwarded-For", "203.0.113.9") // written by the caller: not its address
		front.ServeHTTP(httptest.NewRecorder(), r)
	}
	for i, ids := range jsonIDs {
		if ids[0] != callerTrace {
			t.Errorf("JSON request %d: log ids: got trace %q; want the caller's %q", i, ids[0], callerTrace)
		}
	}
	return jsonIDs
}
