// Package tracing owns the frame's OpenTelemetry traces: it builds the tracer provider from the
// standard OTEL_* variables, wraps the JSON front in the handler that makes a request's server
// span (HTTPHandler), hands gRPC the stats handler that makes a direct call's, adds a call's
// phases to its span as events, and names the trace and span of a request for its log line.
//
// Off, which installs nothing, unless an OTLP endpoint is set and neither OTEL_SDK_DISABLED=true
// nor OTEL_TRACES_EXPORTER=none. The SDK reads the other OTEL_* variables (docs/operations.md);
// this package decides only on, off and the protocol (grpc or http/protobuf, the default).
//
// otelgrpc and otelhttp, of go.opentelemetry.io (the reference implementation the rest of the
// cluster speaks), make the server spans from the caller's traceparent with the semantic
// conventions' names; otelhttp's cost is in docs/performance.md, "The JSON span from otelhttp".
package tracing

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"
)

// Tracing is the service's tracer, on or off. The zero value is off.
type Tracing struct {
	sdk *sdktrace.TracerProvider // nil when off
}

// New returns the service's tracing from the OTEL_* variables: off (see the package doc) or spans
// batched to the OTLP endpoint. service names the service when OTEL_SERVICE_NAME does not.
func New(ctx context.Context, service, version string) (*Tracing, error) {
	return newFrom(ctx, service, version, os.Getenv)
}

func newFrom(ctx context.Context, service, version string, getenv func(string) string) (*Tracing, error) {
	on, protocol, err := settings(getenv)
	if err != nil || !on {
		return &Tracing{}, err
	}
	var exp *otlptrace.Exporter
	if protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return &Tracing{}, fmt.Errorf("tracing: OTLP exporter (%s): %w", protocol, err)
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win over the defaults above
	)
	if err != nil && res == nil {
		return &Tracing{}, fmt.Errorf("tracing: resource: %w", err)
	}
	// The SDK's default sampler honours OTEL_TRACES_SAMPLER and _ARG (unset: parentbased_always_on).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{sdk: tp}, nil
}

func settings(getenv func(string) string) (on bool, protocol string, err error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, "", nil
	}
	switch e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e {
	case "none":
		return false, "", nil
	case "", "otlp":
	default:
		return false, "", fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: only otlp and none are supported", e)
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return false, "", nil
	}
	protocol = cmp.Or(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")),
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")), "http/protobuf")
	if protocol == "grpc" || protocol == "http/protobuf" {
		return true, protocol, nil
	}
	return false, "", fmt.Errorf("tracing: OTLP protocol %q: want grpc or http/protobuf", protocol)
}

// Enabled reports whether spans are made.
func (t *Tracing) Enabled() bool { return t != nil && t.sdk != nil }

// Shutdown exports the spans still batched and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// ServerHandler is the gRPC stats handler that makes each direct call's server span, or nil when
// tracing is off: gRPC builds eight events per call for any stats handler.
func (t *Tracing) ServerHandler() stats.Handler {
	if !t.Enabled() {
		return nil
	}
	return otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(t.sdk), otelgrpc.WithPropagators(propagation.TraceContext{}),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()))
}

// HTTPHandler wraps the JSON front in otelhttp's server span when tracing is on, next itself when
// off. route names a request's route from its path ("" for none), set as its Pattern as ServeMux
// would, for the span's name ("POST /api/score/items"; the method alone without one) and http.route.
func (t *Tracing) HTTPHandler(route func(path string) string, next http.Handler) http.Handler {
	if !t.Enabled() {
		return next
	}
	// otelhttp takes client.address from X-Forwarded-For, which any caller writes: keep the connection's.
	peerAddressed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
			if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				span.SetAttributes(semconv.ClientAddress(host))
			}
		}
		next.ServeHTTP(w, r)
	})
	traced := otelhttp.NewHandler(peerAddressed, "", otelhttp.WithTracerProvider(t.sdk), otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt := route(r.URL.Path); rt != "" {
			r.Pattern = r.Method + " " + rt
		}
		traced.ServeHTTP(w, r)
	})
}

// IDs are the trace and span ids of the span ctx carries (ok false: none), for a log line.
func IDs(ctx context.Context) (traceID, spanID string, ok bool) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", "", false
	}
	return sc.TraceID().String(), sc.SpanID().String(), true
}

// Event adds a named event to the span in ctx, if it records: a call's phases are events on its
// one server span, cheaper than child spans and as useful on a timeline.
func Event(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// EventInt is Event with one integer attribute, made only when the span records: Event's list of
// attributes escapes, so a call that builds one costs an allocation even with tracing off.
func EventInt(ctx context.Context, name, key string, v int) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attribute.Int(key, v)))
	}
}
