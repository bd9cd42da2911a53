package scoring

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func start(t *testing.T) *servetest.Server {
	t.Helper()
	return servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
}

// items builds an items array of lexile demo items L000001.. with the first `correct` right.
func items(n, correct int, prefix string) string {
	parts := make([]string, n)
	for i := range parts {
		r := 0
		if i < correct {
			r = 1
		}
		parts[i] = fmt.Sprintf(`{"id":"%s%06d","result":%d}`, prefix, i+1, r)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func measureID(prefix string, i int) string { return fmt.Sprintf("%s%06d", prefix, i) }

func ids(n int, prefix string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":"%s%06d"}`, prefix, i+1)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// call is one request of the golden table: its path, its JSON body and the rpc it maps to.
type call struct {
	name, path, body string
	grpc             func(ctx context.Context, c scoringv1.ScoringServiceClient, body string) (proto.Message, error)
}

func rpc[Req proto.Message, Resp proto.Message](newReq func() Req, f func(scoringv1.ScoringServiceClient) func(context.Context, Req, ...grpc.CallOption) (Resp, error)) func(context.Context, scoringv1.ScoringServiceClient, string) (proto.Message, error) {
	return func(ctx context.Context, c scoringv1.ScoringServiceClient, body string) (proto.Message, error) {
		req := newReq()
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(body), req); err != nil {
			return nil, err
		}
		return f(c)(ctx, req)
	}
}

var calls = []call{
	{"items-results-standard", "/api/score/items/idsWithResults/standard",
		`{"items":` + items(20, 12, "L") + `,"framework":"lexile","numberCorrect":12}`,
		rpc(func() *scoringv1.ScoreItemResultsRequest { return new(scoringv1.ScoreItemResultsRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemResultsRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreItemResults
		})},
	{"items-ids-standard", "/api/score/items/ids/standard",
		`{"items":` + ids(20, "Q") + `,"numberCorrect":7}`,
		rpc(func() *scoringv1.ScoreItemIdsRequest { return new(scoringv1.ScoreItemIdsRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemIdsRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreItemIds
		})},
	{"scale-standard", "/api/score/scale/standard",
		`{"linkId":"STATE-READ-2026","scaleScore":"512.5","scaleSem":18}`,
		rpc(func() *scoringv1.ScoreScaleRequest { return new(scoringv1.ScoreScaleRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreScaleRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreScale
		})},
	{"items-results-standard-strands", "/api/score/items/idsWithResults/standard/strands",
		`{"grade":3,"timeOfYear":"BOY","items":` + items(30, 18, "L") + `}`,
		rpc(func() *scoringv1.ScoreItemResultsStrandsRequest { return new(scoringv1.ScoreItemResultsStrandsRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemResultsStrandsRequest, ...grpc.CallOption) (*scoringv1.StrandsMeasure, error) {
			return c.ScoreItemResultsStrands
		})},
	{"difficulties-bayes", "/api/score/items/difficulties/bayes",
		`{"items":[{"difficulty":650,"count":4},{"difficulty":720},{"difficulty":800,"count":5}],"numberCorrect":6,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`,
		rpc(func() *scoringv1.ScoreDifficultiesBayesRequest { return new(scoringv1.ScoreDifficultiesBayesRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreDifficultiesBayesRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreDifficultiesBayes
		})},
	{"items-results-bayes", "/api/score/items/idsWithResults/bayes",
		`{"priorAbility":600,"priorUncertainty":90,"elapsedDays":60,"items":` + items(20, 12, "L") + `}`,
		rpc(func() *scoringv1.ScoreItemResultsBayesRequest { return new(scoringv1.ScoreItemResultsBayesRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemResultsBayesRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreItemResultsBayes
		})},
	{"items-ids-bayes", "/api/score/items/ids/bayes",
		`{"items":` + ids(20, "S") + `,"numberCorrect":9,"priorAbility":900,"priorUncertainty":100,"elapsedDays":200}`,
		rpc(func() *scoringv1.ScoreItemIdsBayesRequest { return new(scoringv1.ScoreItemIdsBayesRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemIdsBayesRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreItemIdsBayes
		})},
	{"scale-bayes", "/api/score/scale/bayes",
		`{"linkId":"NATL-MATH-PT","scaleScore":"210","scaleSem":12,"priorAbility":550,"priorUncertainty":60,"elapsedDays":30}`,
		rpc(func() *scoringv1.ScoreScaleBayesRequest { return new(scoringv1.ScoreScaleBayesRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreScaleBayesRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreScaleBayes
		})},
	{"items-results-bayes-strands", "/api/score/items/idsWithResults/bayes/strands",
		`{"priorAbility":480,"priorUncertainty":80,"elapsedDays":150,"grade":4,"timeOfYear":"EOY","items":` + items(30, 20, "L") + `}`,
		rpc(func() *scoringv1.ScoreItemResultsBayesStrandsRequest {
			return new(scoringv1.ScoreItemResultsBayesStrandsRequest)
		}, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreItemResultsBayesStrandsRequest, ...grpc.CallOption) (*scoringv1.BayesStrandsMeasure, error) {
			return c.ScoreItemResultsBayesStrands
		})},
	{"form-standard", "/api/score/form/id/standard",
		`{"formId":"FORM-READ-G3","numberCorrect":21}`,
		rpc(func() *scoringv1.ScoreFormRequest { return new(scoringv1.ScoreFormRequest) }, func(c scoringv1.ScoringServiceClient) func(context.Context, *scoringv1.ScoreFormRequest, ...grpc.CallOption) (*scoringv1.Measure, error) {
			return c.ScoreForm
		})},
}

// TestGolden checks every path's success answer against its golden file (structurally), and that
// the same request over gRPC gives the same answer.
func TestGolden(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(c.path, c.body)
			if r.Status != 200 {
				t.Fatalf("got %d %s; want 200", r.Status, r.Body)
			}
			servetest.Golden(t, filepath.Join("testdata", c.name+".json"), r, *update)

			msg, err := c.grpc(s.Authed(context.Background()), client, c.body)
			if err != nil {
				t.Fatalf("gRPC: %v", err)
			}
			b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			servetest.SameJSON(t, "gRPC and JSON answers", b, r.Body)
			servetest.SameBytesAsProtojson(t, msg, r.Body)
		})
	}
}
