package scoring

import (
	"math/rand/v2"
	"testing"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// scoringSeeds are valid requests of every unary path of the service (docs/examples.md's).
var scoringSeeds = map[string][]string{
	"/api/score/items/idsWithResults/standard": {
		`{"items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1},{"id":"L000005","result":0}]}`,
		`{"fit":true,"grade":3,"timeOfYear":"MOY","items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1},{"id":"L000005","result":0},{"id":"L000006","result":1}]}`,
	},
	"/api/score/items/ids/standard": {`{"items":[{"id":"Q000001"},{"id":"Q000002"},{"id":"Q000003"},{"id":"Q000004"}],"numberCorrect":3}`},
	"/api/score/scale/standard":     {`{"linkId":"STATE-READ-2026","scaleScore":"540","scaleSem":18}`},
	"/api/score/items/idsWithResults/standard/strands": {
		`{"grade":3,"timeOfYear":"BOY","items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1},{"id":"L000005","result":0},{"id":"L000006","result":1}]}`,
	},
	"/api/score/items/difficulties/bayes": {
		`{"items":[{"difficulty":650,"count":4},{"difficulty":720},{"difficulty":800,"count":5}],"numberCorrect":6,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`,
	},
	"/api/score/items/idsWithResults/bayes": {
		`{"priorAbility":600,"priorUncertainty":90,"elapsedDays":60,"items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1}]}`,
		`{"fit":true,"priorAbility":600,"priorUncertainty":90,"elapsedDays":60,"items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":1}]}`,
	},
	"/api/score/items/ids/bayes": {`{"items":[{"id":"S000001"},{"id":"S000002"},{"id":"S000003"}],"numberCorrect":2,"priorAbility":900,"priorUncertainty":100,"elapsedDays":200}`},
	"/api/score/scale/bayes":     {`{"linkId":"NATL-MATH-PT","scaleScore":"210","scaleSem":12,"priorAbility":550,"priorUncertainty":60,"elapsedDays":30}`},
	"/api/score/items/idsWithResults/bayes/strands": {
		`{"priorAbility":480,"priorUncertainty":80,"elapsedDays":150,"grade":4,"timeOfYear":"EOY","items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1},{"id":"L000005","result":0},{"id":"L000006","result":1}]}`,
	},
	"/api/score/form/id/standard": {`{"formId":"FORM-READ-G3","numberCorrect":21}`},
	"/api/score/adaptive/next": {
		`{"framework":"lexile","priorAbility":700,"priorUncertainty":150,"items":[{"id":"L001043","result":1}],"stop":{"maxItems":2}}`,
		`{"framework":"lexile","priorAbility":700,"priorUncertainty":150,"items":[],"stop":{"maxItems":3}}`,
	},
}

// notScoring are paths a scoring batch answers 404: the other service's, the streams', the
// login, unknown ones.
var notScoring = []string{"/api/forecast/reading", "/api/forecast/reading/group", "/api/score/batch", "/api/forecast/batch",
	"/authToken", "/api/score/nope", "/healthz", "/api/forecast/reading/group/stream"}

// TestBatchDifferential: every record of a batch is answered exactly as a unary call of its
// path, status and body bytes, for valid and invalid requests of every unary path.
func TestBatchDifferential(t *testing.T) {
	t.Parallel()
	n := 10000
	if raceEnabled || testing.Short() {
		n = 1000
	}
	s := start(t)
	reqs := servetest.GenerateRequests(rand.New(rand.NewPCG(21, 1)), n, scoringSeeds, notScoring)
	s.CheckBatchDifferential(t, "/api/score/batch", "/no/such/endpoint/anywhere", reqs, notScoring)
}

// TestGRPCBatchDifferential: every record of a ScoreBatch stream is answered exactly as a unary
// gRPC call of its rpc (response or status with its details), for valid and invalid requests
// of every rpc.
func TestGRPCBatchDifferential(t *testing.T) {
	t.Parallel()
	n := 16000 // about two in three decode as gRPC requests (the rest are JSON matters)
	if raceEnabled || testing.Short() {
		n = 1600
	}
	s := start(t)
	reqs := servetest.GenerateRequests(rand.New(rand.NewPCG(21, 2)), n, scoringSeeds, notScoring)
	recs := servetest.GRPCRecords(t, reqs)
	if len(recs) < 10000 && !raceEnabled && !testing.Short() {
		t.Fatalf("%d records decode from %d requests; want at least 10,000", len(recs), n)
	}
	s.CheckGRPCBatchDifferential(t, scoringv1.ScoringService_ScoreBatch_FullMethodName, recs)
}
