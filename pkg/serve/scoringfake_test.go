package serve

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// The fake scoring service, for the tests still on it: the admission, budget, fairness, limits,
// rights, drain and login tests, which are being rewritten with the admission code. Every other
// test of the frame serves the frame's own test service (testservice_test.go) or the contract's
// services answered by answerAll; once these move to the test service too, this file goes.

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

func (f *fakeScoring) ScoreScale(context.Context, *scoringv1.ScoreScaleRequest) (*scoringv1.Measure, error) {
	return &scoringv1.Measure{Ability: 1}, nil
}

// scorePath is a path of the fake scoring service, for the tests still serving it (start).
const scorePath = "/api/score/items/idsWithResults/standard"

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

// grpcUnaryStatus is the status of a unary ScoreItemResults call with one item id.
func (h *harness) grpcUnaryStatus(tok, item string) error {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	_, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreItemResults(ctx, itemsRecord("", item).GetScoreItemResults())
	return err
}
