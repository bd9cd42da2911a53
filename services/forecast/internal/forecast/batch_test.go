package forecast

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/servetest"
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
	unary := s.Unary(reqs)
	notFound := s.Post("/api/forecast/nope", `{}`)
	got := s.Batch("/api/forecast/batch", string(servetest.BatchBody(reqs)))
	if got.Status != http.StatusOK || got.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("batch: %d %s\n%.500s", got.Status, got.Header.Get("Content-Type"), got.Body)
	}
	answers, summary := servetest.ParseBatch(t, got.Body)
	if len(answers) != n {
		t.Fatalf("%d answers for %d records", len(answers), n)
	}
	ok, statuses, failures := 0, map[int]int{}, 0
	for i, a := range answers {
		want := unary[i]
		if a.ID != "r"+strconv.Itoa(i) {
			t.Fatalf("answer %d has id %q", i, a.ID)
		}
		if slices.Contains(notForecast, reqs[i].Path) {
			want = notFound
		}
		if a.Status != want.Status || !bytes.Equal(a.Body, bytes.TrimRight(want.Body, "\n")) {
			t.Errorf("record %d %s %s:\nbatch %d %s\nunary %d %s", i, reqs[i].Path, reqs[i].Body, a.Status, a.Body, want.Status, want.Body)
			if failures++; failures > 20 {
				t.FailNow()
			}
		}
		statuses[a.Status]++
		if a.Status == http.StatusOK {
			ok++
		}
	}
	if summary["records"] != n || summary["ok"] != ok || summary["failed"] != n-ok {
		t.Errorf("summary %v; want %d records, %d ok", summary, n, ok)
	}
	t.Logf("%d records: statuses %v", n, statuses)
	if statuses[200] < n/4 || statuses[400] < n/10 || statuses[404] < n/50 {
		t.Errorf("the mix is not varied enough: %v", statuses)
	}
}
