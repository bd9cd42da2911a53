package serve

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"google.golang.org/protobuf/types/dynamicpb"
)

// otlpReceiver is a real OTLP trace receiver: the collector's own generated gRPC service.
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (rc *otlpReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			rc.spans = append(rc.spans, ss.GetSpans()...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// TestTracingBothFronts: with an OTLP endpoint set, a JSON call and a gRPC call that carry a
// traceparent each come back, at a real receiver on loopback, as one server span whose parent
// is the caller's span, in the caller's trace, named by route and by rpc; the JSON call's
// in-process pass through the chain adds no span of its own; and each request's log line
// carries the exported span's trace and span ids. Not parallel: it sets the OTEL_ variables,
// which every server of this process would read.
func TestTracingBothFronts(t *testing.T) {
	rc := &otlpReceiver{}
	lis := loopback(t)
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, rc)
	go gs.Serve(lis)
	defer gs.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")

	h := startTest(t, testConfig(t))
	const (
		jsonTrace, jsonParent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		grpcTrace, grpcParent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	)
	tok := h.token("demo", "demo-secret")
	if r := h.post(throwawayPath, `{"text":"ok"}`, "Authorization", "Bearer "+tok,
		"traceparent", "00-"+jsonTrace+"-"+jsonParent+"-01"); r.status != 200 {
		t.Fatalf("JSON call: got %d %s; want 200", r.status, r.body)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok,
		"traceparent", "00-"+grpcTrace+"-"+grpcParent+"-01")
	if err := h.grpc.Invoke(ctx, throwawayMethod, echoRequest("ok"), dynamicpb.NewMessage(echoOut)); err != nil {
		t.Fatalf("gRPC call: %v", err)
	}
	h.cancel() // the server flushes its spans as it stops
	stopped := <-h.stopped
	h.stopped <- stopped // for the harness's own stop at cleanup

	rc.mu.Lock()
	spans := rc.spans
	rc.mu.Unlock()
	byTrace := map[string][]*tracepb.Span{}
	for _, s := range spans {
		id := hex.EncodeToString(s.GetTraceId())
		byTrace[id] = append(byTrace[id], s)
	}
	logs := requestLines(t, h.logs.String())
	for _, want := range []struct {
		front, trace, parent, name string
		events                     []string
	}{
		{"http", jsonTrace, jsonParent, "POST " + throwawayPath, []string{"admitted and read", "decoded", "handled"}},
		{"grpc", grpcTrace, grpcParent, throwawayMethod[1:], []string{"decoded", "handled"}},
	} {
		got := byTrace[want.trace]
		if len(got) != 1 {
			t.Errorf("%s: %d spans in the caller's trace; want exactly one (of %d exported)", want.front, len(got), len(spans))
			continue
		}
		s := got[0]
		if s.GetName() != want.name || hex.EncodeToString(s.GetParentSpanId()) != want.parent || s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: span %q, parent %x, kind %v; want %q, parent %s, server", want.front, s.GetName(), s.GetParentSpanId(), s.GetKind(), want.name, want.parent)
		}
		var events []string
		for _, e := range s.GetEvents() {
			events = append(events, e.GetName())
		}
		if !slices.Equal(events, want.events) {
			t.Errorf("%s: span events %q; want %q", want.front, events, want.events)
		}
		line, ok := logs[want.trace]
		if !ok {
			t.Errorf("%s: no request line with trace_id %s", want.front, want.trace)
			continue
		}
		if line.front != want.front || line.spanID != hex.EncodeToString(s.GetSpanId()) {
			t.Errorf("%s: request line %+v; want front %s and the exported span %x", want.front, line, want.front, s.GetSpanId())
		}
	}
}

type tracedLine struct{ front, spanID string }

// requestLines reads the request lines of a JSON log, by trace id.
func requestLines(t *testing.T, logs string) map[string]tracedLine {
	t.Helper()
	out := map[string]tracedLine{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Msg     string `json:"msg"`
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.TraceID == "" {
			continue
		}
		switch l.Msg {
		case "http request":
			out[l.TraceID] = tracedLine{"http", l.SpanID}
		case "grpc request":
			out[l.TraceID] = tracedLine{"grpc", l.SpanID}
		}
	}
	return out
}
