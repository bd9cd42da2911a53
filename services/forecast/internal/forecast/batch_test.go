package forecast

import (
	"math/rand/v2"
	"testing"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// forecastSeeds are valid requests of every unary path of the service (docs/examples.md's).
var forecastSeeds = map[string][]string{
	"/api/forecast/reading": {
		`{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800]}`,
		`{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800],"grade":4,"timeOfYear":"EOY"}`,
	},
	"/api/forecast/reading/group": {`{"studentData":[{"priorAbility":640,"priorUncertainty":70,"elapsedDays":180},[420,55,90]],"testUncertainty":32.5,"cutLevels":[500,650,800]}`},
	"/api/forecast/math":          {`{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800]}`},
	"/api/forecast/math/group":    {`{"studentData":[[640,70,180],[420,55,90]],"testUncertainty":32.5,"cutLevels":[500,650,800]}`},
	"/api/forecast/comprehension": {`{"framework":"lexile","readerAbility":850,"textMeasures":[600,850,1100]}`},
	"/api/forecast/plan": {
		`{"framework":"lexile","priorAbility":520,"priorUncertainty":60,"grade":3,"timeOfYear":"MOY","target":900,"testUncertainty":32.5}`,
		`{"framework":"quantile","priorAbility":600,"priorUncertainty":45,"grade":4,"timeOfYear":"BOY","target":760,"probability":0.6,"horizonDays":400}`,
	},
	"/api/forecast/growth": {
		`{"framework":"lexile","grade":6,"timeOfYear":"EOY","ability":820,"priors":[{"grade":5,"timeOfYear":"EOY","ability":760}],"percentiles":[10,50,90]}`,
		`{"framework":"quantile","grade":8,"timeOfYear":"eoy","ability":900,"priors":[{"grade":7,"timeOfYear":"EOY","ability":820},{"grade":6,"timeOfYear":"EOY","ability":700}]}`,
	},
}

// notForecast are paths a forecast batch answers 404.
var notForecast = []string{"/api/score/items/idsWithResults/standard", "/api/forecast/batch", "/api/score/batch",
	"/api/forecast/reading/group/stream", "/api/forecast/math/group/stream", "/authToken", "/api/forecast/nope", "/metrics"}

// TestBatchDifferential: every record of a batch is answered exactly as a unary call of its
// path, status and body bytes, for valid and invalid requests of every unary path.
func TestBatchDifferential(t *testing.T) {
	t.Parallel()
	n := 10000
	if raceEnabled || testing.Short() {
		n = 1000
	}
	s := start(t)
	reqs := servetest.GenerateRequests(rand.New(rand.NewPCG(21, 2)), n, forecastSeeds, notForecast)
	s.CheckBatchDifferential(t, "/api/forecast/batch", "/no/such/endpoint/anywhere", reqs, notForecast)
}

// TestGRPCBatchDifferential: every record of a ForecastBatch stream is answered exactly as a
// unary gRPC call of its rpc (response or status with its details).
func TestGRPCBatchDifferential(t *testing.T) {
	t.Parallel()
	n := 25000 // about four in ten decode as gRPC requests (the rest are JSON matters: array students)
	if raceEnabled || testing.Short() {
		n = 2500
	}
	s := start(t)
	reqs := servetest.GenerateRequests(rand.New(rand.NewPCG(21, 3)), n, forecastSeeds, notForecast)
	recs := servetest.GRPCRecords(t, reqs)
	if len(recs) < 10000 && !raceEnabled && !testing.Short() {
		t.Fatalf("%d records decode from %d requests; want at least 10,000", len(recs), n)
	}
	s.CheckGRPCBatchDifferential(t, forecastv1.ForecastService_ForecastBatch_FullMethodName, recs)
}
