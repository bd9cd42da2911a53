package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// fakeScoring is a scoring service whose behaviour the test picks with the first item id.
type fakeScoring struct {
	scoringv1.UnimplementedScoringServiceServer
	release chan struct{} // "slow" waits for it
	started chan struct{} // "slow" signals it has begun
	calls   atomic.Int64  // ScoreItemResults calls begun
}

func (f *fakeScoring) ScoreItemResults(ctx context.Context, req *scoringv1.ScoreItemResultsRequest) (*scoringv1.Measure, error) {
	f.calls.Add(1)
	id := ""
	if len(req.GetItems()) > 0 {
		id = req.GetItems()[0].GetId()
	}
	switch id {
	case "panic":
		panic("secret internal detail")
	case "slow":
		f.started <- struct{}{}
		<-f.release
	case "invalid":
		var p rpcerr.Problems
		p.Add("items[0].result", "must be 0 or 1, got %d", 7)
		p.Add("framework", "is required")
		p.Add("", "request-wide problem")
		return nil, p.Err()
	case "fault":
		return nil, errors.New("database password is hunter2")
	case "metadata":
		// Answers with the metadata keys the call carried, in ApiVersion.
		md, _ := metadata.FromIncomingContext(ctx)
		keys := slices.Sorted(maps.Keys(md))
		return &scoringv1.Measure{ApiVersion: strings.Join(keys, ",")}, nil
	}
	client, _ := ClaimsFrom(ctx)
	return &scoringv1.Measure{Ability: 500, AbilityDisplay: "500L", Uncertainty: 0, Framework: "lexile", ApiVersion: client.ClientID}, nil
}

// scoringGateway registers the scoring contract's JSON routes on a client of the in-process
// channel, as the scoring service does.
func scoringGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	return scoringv1.RegisterScoringServiceHandlerClient(ctx, mux, scoringv1.NewScoringServiceClient(conn))
}

func (f *fakeScoring) ScoreScale(context.Context, *scoringv1.ScoreScaleRequest) (*scoringv1.Measure, error) {
	return &scoringv1.Measure{Ability: 1}, nil
}

type harness struct {
	t       testing.TB
	srv     *Server
	base    string // http://127.0.0.1:port
	grpc    *grpc.ClientConn
	fake    *fakeScoring // start's
	echo    *echoServer  // startTest's
	logs    *proc.LogBuffer
	cancel  context.CancelFunc
	stopped chan error
}

// clientSecret is the secret of the clients the harness writes into its clients file.
const clientSecret = "s3cret-for-tests"

// scorePath is a path of the fake scoring service, for the tests still serving it (start).
const scorePath = "/api/score/items/idsWithResults/standard"

// writeTestClients writes a clients file with a scoring client limited to the test service's
// Echo (throwaway:echo, not Shout) and a forecast-only client.
func writeTestClients(t *testing.T) string {
	t.Helper()
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	yaml := "clients:\n" +
		"  - clientId: echo-only\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"" + throwawayPerm + "\"]\n" +
		"  - clientId: forecaster\n    secretHash: " + hash + "\n    services: [forecast]\n    permissions: [\"*\"]\n"
	path := filepath.Join(t.TempDir(), "clients.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeClients writes a clients file with a scoring-only client limited to score:standard and a
// forecast-only client.
func writeClients(t *testing.T) string {
	t.Helper()
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	yaml := "clients:\n" +
		"  - clientId: standard-only\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"score:standard\"]\n" +
		"  - clientId: forecaster\n    secretHash: " + hash + "\n    services: [forecast]\n    permissions: [\"*\"]\n"
	path := filepath.Join(t.TempDir(), "clients.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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

// start runs a server with the fake scoring service on loopback listeners on port 0.
func start(t testing.TB, cfg Config) *harness {
	t.Helper()
	fake := &fakeScoring{release: make(chan struct{}), started: make(chan struct{}, 1)}
	h := startService(t, cfg, Service{
		Register: func(g grpc.ServiceRegistrar) { scoringv1.RegisterScoringServiceServer(g, fake) },
		Gateway:  scoringGateway,
		Wire:     scoringWire,
	})
	h.fake = fake
	return h
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
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func (h *harness) do(method, path, contentType, body string, header ...string) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
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

// startBatch runs the fake scoring service with its batch path, and clients: batcher
// (score:standard and score:batch) and standard-only (no score:batch). For the tests still on
// the fake (the admission, limits and rights tests, the gRPC batch tests); the others serve the
// test service (startTestBatch).
func startBatch(t *testing.T, edit func(*Config)) *harness {
	t.Helper()
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n" +
		"  - clientId: batcher\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"score:standard\", \"score:batch\"]\n" +
		"  - clientId: standard-only\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"score:standard\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.ClientsFile = clients
	if edit != nil {
		edit(&cfg)
	}
	fake := &fakeScoring{release: make(chan struct{}), started: make(chan struct{}, 1)}
	h := startService(t, cfg, Service{
		Register:  func(g grpc.ServiceRegistrar) { scoringv1.RegisterScoringServiceServer(g, fake) },
		Gateway:   scoringGateway,
		Wire:      scoringWire,
		BatchPath: "/api/score/batch",
		BatchRPC:  scoringv1.ScoringService_ScoreBatch_FullMethodName,
	})
	h.fake = fake
	return h
}

// itemsRecord is a ScoreBatch record of the fake scoring service: one item, its id item.
func itemsRecord(id, item string) *scoringv1.ScoreBatchRecord {
	return &scoringv1.ScoreBatchRecord{Id: id, Request: &scoringv1.ScoreBatchRecord_ScoreItemResults{
		ScoreItemResults: &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: proto.String(item), Result: proto.Int32(1)}}}}}
}

// scoreBatch sends records on a ScoreBatch stream with the token, reading as it sends, and
// returns the answers, the trailer and the stream's status.
func scoreBatch(t *testing.T, h *harness, tok string, records []*scoringv1.ScoreBatchRecord) ([]*scoringv1.ScoreBatchAnswer, metadata.MD, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok), time.Minute)
	defer cancel()
	st, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreBatch(ctx)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		for _, r := range records {
			if st.Send(r) != nil {
				return
			}
		}
		_ = st.CloseSend()
	}()
	var out []*scoringv1.ScoreBatchAnswer
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, st.Trailer(), nil
		}
		if err != nil {
			return out, st.Trailer(), err
		}
		out = append(out, a)
	}
}
