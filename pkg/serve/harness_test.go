package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/yardstick-dev/yardstick/internal/calltest"
	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/pkg/token/tokentest"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// scoringGateway registers the scoring contract's JSON routes on a client of the in-process
// channel, as the scoring service does.
func scoringGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	return scoringv1.RegisterScoringServiceHandlerClient(ctx, mux, scoringv1.NewScoringServiceClient(conn))
}

type harness struct {
	t       testing.TB
	srv     *Server
	base    string // http://127.0.0.1:port
	grpc    *grpc.ClientConn
	echo    *echoServer // startTest's handlers
	logs    *proc.LogBuffer
	cancel  context.CancelFunc
	stopped chan error
}

// clientSecret is the secret of the clients the harness writes into its clients file.
const clientSecret = "s3cret-for-tests"

// writeTestClients writes a clients file with a scoring client limited to the test service's
// Echo (throwaway:echo, not Shout) and a forecast-only client.
func writeTestClients(t *testing.T) string {
	t.Helper()
	return tokentest.WriteClients(t, t.TempDir(),
		tokentest.Client{ID: "echo-only", Secret: clientSecret, Services: []string{token.ServiceScoring}, Permissions: []string{throwawayPerm}},
		tokentest.Client{ID: "forecaster", Secret: clientSecret, Services: []string{token.ServiceForecast}, Permissions: []string{"*"}})
}

func testConfig(t testing.TB) Config {
	t.Helper()
	cfg, err := LoadConfig(scoringID, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReloadInterval = 0
	cfg.ShutdownGrace = 10 * time.Second
	return cfg
}

// forecastConfig is the test configuration of a server under the forecast service's identity,
// for the tests that serve its contract (contractService(t, "forecast")).
func forecastConfig(t testing.TB) Config {
	t.Helper()
	cfg, err := LoadConfig(forecastID, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReloadInterval = 0
	return cfg
}

// startService runs svc on loopback listeners on port 0 until the test ends.
func startService(t testing.TB, cfg Config, svc Service) *harness {
	t.Helper()
	h := &harness{t: t, logs: &proc.LogBuffer{}, stopped: make(chan error, 1)}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	srv, err := New(ctx, cfg, log, svc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.srv = srv
	httpLis, grpcLis := loopback(t), loopback(t)
	go func() { h.stopped <- srv.Serve(ctx, httpLis, grpcLis) }()
	h.base = "http://" + httpLis.Addr().String()
	h.grpc, err = grpc.NewClient(grpcLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.grpc.Close()
		h.stop()
	})
	return h
}

// loopback is a listener on a free loopback port; Serve closes it.
func loopback(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (h *harness) stop() {
	h.cancel()
	select {
	case <-h.stopped:
	case <-time.After(15 * time.Second):
		h.t.Error("server did not stop within 15s")
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	return calltest.Response{Body: r.body}.Object(t)
}

func (h *harness) do(method, path, contentType, body string, header ...string) response {
	h.t.Helper()
	r := calltest.Do(h.t, method, h.base+path, contentType, body, header...)
	return response{status: r.Status, header: r.Header, body: r.Body}
}

func (h *harness) post(path, body string, header ...string) response {
	h.t.Helper()
	return h.do(http.MethodPost, path, "application/json", body, header...)
}

// token gets a token for the demo client through the JSON front.
func (h *harness) token(clientID, secret string) string {
	h.t.Helper()
	r := h.post("/authToken", `{"clientId":"`+clientID+`","clientSecret":"`+secret+`"}`)
	if r.status != http.StatusOK {
		h.t.Fatalf("authToken: got %d %s; want 200", r.status, r.body)
	}
	return r.json(h.t)["accessToken"].(string)
}
