package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/internal/calltest"
	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/pkg/token/tokentest"
	"github.com/yardstick-dev/yardstick/proto/prototest"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// A "forecast" server that serves the contract's forecast service (its group methods take the
// group limit) beside its scoring service (1 MiB methods), each rpc answered empty by answerAll,
// on a loopback listener that counts the bytes the server reads. The guard's own tests run in
// internal/grpcguard on a guarded server of that package's; this one serves what only the whole
// frame shows: the server-wide limit its configuration and routes make (TestGRPCLimits), a
// refusal on a real clients file's permissions with the bytes read off the wire
// (TestGRPCRefusedBeforeRead), the probe listener and the read timeout's default (run.go,
// config.go), and the budget, shares, log-limit and JSON tests of other parts.

// countingListener counts every byte read from its connections.
type countingListener struct {
	net.Listener
	read atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type guardHarness struct {
	srv   *Server
	conn  *grpc.ClientConn
	lis   *countingListener
	logs  *proc.LogBuffer
	token string // the demo client's (every permission)
}

// readerSecret is the secret of the "reader" client: forecast:reading only.
const readerSecret = "reader-secret-for-tests"

// startGuard serves the fake scoring and forecast services as the forecast service on loopback;
// each of opts may adjust the server before it serves.
func startGuard(t *testing.T, opts ...func(*Server)) *guardHarness {
	t.Helper()
	cfg, err := LoadConfig(forecastID, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReloadInterval = 0
	cfg.ClientsFile = tokentest.WriteClients(t, t.TempDir(), tokentest.Client{ID: "reader", Secret: readerSecret, Services: []string{token.ServiceForecast}, Permissions: []string{"forecast:reading"}})
	h := &guardHarness{logs: &proc.LogBuffer{}}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	h.srv, err = New(ctx, cfg, log, guardService(t))
	if err != nil {
		cancel()
		t.Fatalf("New: %v", err)
	}
	for _, o := range opts {
		o(h.srv)
	}
	httpLis, grpcLis := loopback(t), loopback(t)
	h.lis = &countingListener{Listener: grpcLis}
	stopped := make(chan error, 1)
	go func() { stopped <- h.srv.Serve(ctx, httpLis, h.lis) }()
	h.conn, err = grpc.NewClient(grpcLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.conn.Close()
		cancel()
		<-stopped
	})
	h.token = h.issue(t, "demo", "demo-secret")
	return h
}

// dial opens another connection to the server (one connection holds at most grpcguard.MaxTokenlessPerConn
// calls without a token in the slots).
func (h *guardHarness) dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(h.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// guardService is the contract's scoring and forecast services, each rpc answered empty
// (answerAll), without a JSON front.
func guardService(t testing.TB) Service {
	t.Helper()
	scoring := answerAll(t, scoringv1.ScoringService_ServiceDesc.ServiceName)
	forecast := answerAll(t, forecastv1.ForecastService_ServiceDesc.ServiceName)
	return Service{
		Register: func(g grpc.ServiceRegistrar) {
			g.RegisterService(scoring, struct{}{})
			g.RegisterService(forecast, struct{}{})
		},
		Gateway: func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error { return nil },
		Wire:    WireRules{Aliases: scoringWire.Aliases, Ignored: union(scoringWire.Ignored, forecastWire.Ignored), Positional: forecastWire.Positional, NumberAsText: scoringWire.NumberAsText},
		Methods: fakeDefaults.forecastMethods(),
	}
}

func (h *guardHarness) issue(t *testing.T, id, secret string) string {
	t.Helper()
	tok, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: &id, ClientSecret: &secret})
	if err != nil {
		t.Fatalf("IssueToken(%s): %v", id, err)
	}
	return tok.GetAccessToken()
}

// bearer is a context whose calls carry auth as their Authorization ("" = none).
func bearer(auth string) context.Context {
	if auth == "" {
		return context.Background()
	}
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", auth)
}

// count is the gRPC requests counter of one route and code.
// refusals is yardstick_admission_refusals_total{front, cause}.
func (h *guardHarness) refusals(front, cause string) float64 {
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() != "yardstick_admission_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["front"] == front && got["cause"] == cause {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1 // no such series
}

func (h *guardHarness) count(route, code string) float64 {
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		panic(err)
	}
	want := map[string]string{"front": "grpc", "route": route, "code": code}
	for _, f := range families {
		if f.GetName() != "yardstick_requests_total" {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// logged reports whether a "grpc request" log line names route and code.
func (h *guardHarness) logged(route, code string) bool {
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"grpc request"`) && strings.Contains(line, `"route":"`+route+`"`) && strings.Contains(line, `"code":"`+code+`"`) {
			return true
		}
	}
	return false
}

// Requests of an exact encoded size (the one copy is the contract's, proto/prototest).
var (
	scoreOfSize = prototest.Score
	groupOfSize = prototest.Group
)

// waitFor polls cond for up to 5 s (the one copy is internal/calltest's): slots come back when
// gRPC ends a call, just after the caller has its answer.
var waitFor = calltest.WaitFor
