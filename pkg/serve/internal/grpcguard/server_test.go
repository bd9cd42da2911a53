package grpcguard

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/internal/calltest"
	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/proto/prototest"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// The guard's own server: a gRPC server guarded as the frame guards it (New's options, the read
// admission of every unary service, the door's observe and message steps, the stream interceptor,
// the connection watch and the sweep of ended calls), serving the contract's scoring and forecast
// services with every rpc answered empty, the token service (a dev issuer's demo client),
// health and reflection, on a real loopback listener. What only the whole frame shows (the chain after the door,
// the JSON front, the batch streams' handler, reloads) stays in pkg/serve's tests.

const (
	groupMethod  = "/yardstick.forecast.v1.ForecastService/ForecastReadingGroup"
	scoreMethod  = "/yardstick.scoring.v1.ScoringService/ScoreItemResults"
	issueMethod  = "/yardstick.auth.v1.TokenService/IssueToken"
	healthMethod = "/grpc.health.v1.Health/Check"
	watchMethod  = "/grpc.health.v1.Health/Watch"
	budgetBytes  = 256 << 20
)

type harness struct {
	g     *Guard
	addr  string
	conn  *grpc.ClientConn
	logs  *proc.LogBuffer
	token string // the demo client's (every permission)
}

// startGuard serves the guarded server; each of opts may adjust the guard before it serves.
func startGuard(t *testing.T, opts ...func(*Guard)) *harness {
	t.Helper()
	issuer, err := token.New(token.Options{Dev: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{logs: &proc.LogBuffer{}}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := telemetry.NewRecorder(log, token.ServiceForecast)
	az := authz.New(issuer, token.ServiceForecast, log, nil)
	hs := health.NewServer()
	services := []struct {
		desc *grpc.ServiceDesc
		impl any
	}{
		{answerAll(t, scoringv1.ScoringService_ServiceDesc.ServiceName), struct{}{}},
		{answerAll(t, forecastv1.ForecastService_ServiceDesc.ServiceName), struct{}{}},
		{&authv1.TokenService_ServiceDesc, az.TokenService()},
		{&healthpb.Health_ServiceDesc, hs},
	}
	reflected := []*grpc.ServiceDesc{&reflectionv1.ServerReflection_ServiceDesc, &reflectionv1alpha.ServerReflection_ServiceDesc}
	info := map[string]grpc.ServiceInfo{}
	for _, s := range services {
		var methods []grpc.MethodInfo
		for _, m := range s.desc.Methods {
			methods = append(methods, grpc.MethodInfo{Name: m.MethodName})
		}
		for _, st := range s.desc.Streams {
			methods = append(methods, grpc.MethodInfo{Name: st.StreamName, IsClientStream: st.ClientStreams, IsServerStream: st.ServerStreams})
		}
		info[s.desc.ServiceName] = grpc.ServiceInfo{Methods: methods}
	}
	for _, d := range reflected {
		info[d.ServiceName] = grpc.ServiceInfo{Methods: []grpc.MethodInfo{{Name: d.Streams[0].StreamName, IsClientStream: true, IsServerStream: true}}}
	}
	group := routes.Method{BodyLimit: 16 << 20, MessageLimit: groupLimit, Entries: 100_000, Cost: admission.GroupCost{ // the forecast service's model
		JSON: admission.FrontCost{PerByte: 16, PerEntry: 1000, MinEntryBytes: 8}, Proto: admission.FrontCost{PerByte: 24, PerEntry: 320, MinEntryBytes: 2}, Base: 256 << 10}}
	table, err := routes.Build(info, 1<<20, map[string]routes.Method{ // the forecast service's group rpcs
		groupMethod: group, "/yardstick.forecast.v1.ForecastService/ForecastMathGroup": group})
	if err != nil {
		t.Fatal(err)
	}
	gt := &gate.Gate{Authz: az, Budget: admission.New(budgetBytes, rec.Registry(), token.ServiceForecast)}
	g, sopts := New(Options{Service: token.ServiceForecast, MaxStreams: 100, ReadTimeout: 10 * time.Second, StreamIdle: time.Minute,
		Gate: gt, Telemetry: rec, Log: log}, table, budgetBytes)
	srv := grpc.NewServer(append(sopts, grpc.ChainUnaryInterceptor(g.Observe, g.Receive), grpc.StreamInterceptor(g.StreamInterceptor))...)
	for _, s := range services {
		g.Registrar(srv).RegisterService(s.desc, s.impl)
	}
	reflection.Register(srv)
	for _, o := range opts {
		o(g)
	}
	lis := loopback(t)
	h.g, h.addr = g, lis.Addr().String()
	go func() { _ = srv.Serve(g.Listen(lis)) }()
	sweep := time.NewTicker(EndedCallSweep)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sweep.C:
				g.LogEndedCalls()
			case <-done:
				return
			}
		}
	}()
	h.conn = h.dial(t)
	t.Cleanup(func() {
		close(done)
		sweep.Stop()
		srv.Stop()
	})
	id, secret := token.DevClientID, token.DevClientSecret
	tok, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: &id, ClientSecret: &secret})
	if err != nil {
		t.Fatalf("IssueToken: %v", err)
	}
	h.token = tok.GetAccessToken()
	return h
}

// dial opens another connection to the server (one connection holds at most MaxTokenlessPerConn
// calls without a token in the slots).
func (h *harness) dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// answerAll is the contract's service of that name with every unary rpc answered empty, through
// the interceptors, and every stream a stub (the one copy is proto/prototest's).
var answerAll = prototest.AnswerAll

// bearer is a context whose calls carry auth as their Authorization ("" = none).
func bearer(auth string) context.Context {
	if auth == "" {
		return context.Background()
	}
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", auth)
}

// count is yardstick_requests_total{front="grpc", route, code}.
func (h *harness) count(route, code string) float64 {
	return h.series("yardstick_requests_total", map[string]string{"front": "grpc", "route": route, "code": code})
}

// countAll is the number of direct gRPC calls of route counted, whatever their code.
func (h *harness) countAll(route string) float64 {
	return h.series("yardstick_requests_total", map[string]string{"front": "grpc", "route": route})
}

// refusals is yardstick_admission_refusals_total{front, cause}.
func (h *harness) refusals(front, cause string) float64 {
	return h.series("yardstick_admission_refusals_total", map[string]string{"front": front, "cause": cause})
}

// metric is the value of a counter without labels of its own.
func (h *harness) metric(name string) float64 { return h.series(name, nil) }

// series is the sum of the counters of family name whose labels include want.
func (h *harness) series(name string, want map[string]string) float64 {
	families, err := h.g.Telemetry.Registry().Gather()
	if err != nil {
		panic(err)
	}
	n := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue metrics
				}
			}
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// logged reports whether a "grpc request" log line names route and code.
func (h *harness) logged(route, code string) bool { return h.loggedAt(route, code, "") }

// loggedAt is logged, at the level named ("INFO", "WARN", "ERROR"; "": any).
func (h *harness) loggedAt(route, code, level string) bool {
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if level != "" && !strings.Contains(line, `"level":"`+level+`"`) {
			continue
		}
		if strings.Contains(line, `"msg":"grpc request"`) && strings.Contains(line, `"route":"`+route+`"`) && strings.Contains(line, `"code":"`+code+`"`) {
			return true
		}
	}
	return false
}

// loggedMsg reports whether a log line has msg.
func (h *harness) loggedMsg(msg string) bool {
	return strings.Contains(h.logs.String(), `"msg":"`+msg)
}

// errorInfoOf is the ErrorInfo detail of a status error (nil when it has none).
func errorInfoOf(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// retryOf is the RetryInfo delay of a status error (0 when it has none).
func retryOf(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			return r.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// Requests of an exact encoded size (the one copy is the contract's, proto/prototest).
var (
	scoreOfSize = prototest.Score
	groupOfSize = prototest.Group
	issueOfSize = prototest.Issue
)

func ptr[T any](v T) *T { return &v }

// waitFor polls cond for up to 5 s (the one copy is internal/calltest's): slots come back when
// gRPC ends a call, just after the caller has its answer.
var waitFor = calltest.WaitFor
