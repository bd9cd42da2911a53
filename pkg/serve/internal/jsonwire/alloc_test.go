package jsonwire

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// TestDecodeAllocations pins the fast path's allocation counts, which do not grow with the number
// of elements: a regression to per-field pointers (≈ 6 per item) would fail here, and so would
// chunks of elements made per request again (2 for 40 items, 7 for 1,000) instead of kept by the
// decoder. Counts, not times: they do not flake on a busy machine.
func TestDecodeAllocations(t *testing.T) {
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, `{"id":"L`+strconv.Itoa(100000+i)+`","result":`+strconv.Itoa(i%2)+`}`)
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `],"framework":"lexile"}`)
	c := New(Options{Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true}})
	var req scoringv1.ScoreItemResultsRequest
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 && !raceEnabled {
		t.Errorf("40-item request: %v allocations; want at most 4", allocs)
	}
	if len(req.GetItems()) != 40 || req.GetItems()[39].GetId() != "L100039" || req.GetItems()[39].GetResult() != 1 {
		t.Errorf("decoded %v; want the 40 items", req.GetItems())
	}

	var students []string
	for i := 0; i < 1000; i++ {
		students = append(students, `[500,40,`+strconv.Itoa(i)+`]`)
	}
	group := []byte(`{"studentData":[` + strings.Join(students, ",") + `],"testUncertainty":30,"cutLevels":[400,600]}`)
	var g forecastv1.GroupForecastRequest
	allocs = testing.AllocsPerRun(20, func() {
		if err := c.Unmarshal(group, &g); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 8 && !raceEnabled {
		t.Errorf("1,000-student group: %v allocations; want at most 8", allocs)
	}
	if d := g.GetStudentData()[999]; d.GetElapsedDays() != 999 || d.GetPriorAbility() != 500 {
		t.Errorf("student 999: got %v; want [500,40,999]", d)
	}
}

// TestHostileBodiesStayCheap: past MaxProblems, unknown keys are skipped without names or
// suggestions, and a list longer than MaxListLen ends decoding there; neither costs memory in
// proportion to the body.
func TestHostileBodiesStayCheap(t *testing.T) {
	c := New(Options{MaxListLen: 1000, ListLimits: map[protoreflect.FullName]map[string]int{"yardstick.scoring.v1.ScoreItemIdsRequest": {"items": 10}}, Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true}})
	unknown := []byte(`{"studentData":[` + strings.Repeat(`{"zz":1,"yy":2,"xx":3,"ww":4},`, 20000) + `{}]}`)
	var g forecastv1.GroupForecastRequest
	var stats [2]runtime.MemStats
	runtime.ReadMemStats(&stats[0])
	err := c.Unmarshal(unknown, &g)
	runtime.ReadMemStats(&stats[1])
	werr, ok := err.(*jsoncodec.Error)
	if !ok || len(werr.Problems) != jsoncodec.MaxProblems || werr.Dropped == 0 {
		t.Fatalf("got %v; want %d problems and a count of the rest", err, jsoncodec.MaxProblems)
	}
	if perByte := float64(stats[1].TotalAlloc-stats[0].TotalAlloc) / float64(len(unknown)); perByte > 2 && !raceEnabled {
		t.Errorf("unknown keys: %.1f bytes allocated per body byte; want at most 2", perByte)
	}

	for _, tc := range []struct {
		n       int
		refused bool
	}{{1001, false}, {1002, true}} { // one over the limit is decoded: the service names the excess
		body := []byte(`{"studentData":[` + strings.TrimSuffix(strings.Repeat(`[1,2,3],`, tc.n), ",") + `],"cutLevels":[1]}`)
		err := c.Unmarshal(body, &g)
		switch {
		case !tc.refused && (err != nil || len(g.GetStudentData()) != tc.n):
			t.Errorf("%d entries (the limit): got %v and %d students; want them all", tc.n, err, len(g.GetStudentData()))
		case tc.refused:
			werr, ok := err.(*jsoncodec.Error)
			if !ok || len(werr.Problems) != 1 || werr.Problems[0].Path != "studentData" || werr.Problems[0].Message != "holds more than 1000 entries; the limit is 1000" {
				t.Errorf("%d entries: got %v; want one problem at studentData naming the limit", tc.n, err)
			}
		}
	}
	huge := []byte(`{"cutLevels":[` + strings.TrimSuffix(strings.Repeat(`1,`, 1002), ",") + `]}`)
	if err := c.Unmarshal(huge, &g); err == nil {
		t.Error("1,002 cut levels: got no error; want the list limit")
	}
	items := []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(`{"id":"L1"},`, 12), ",") + `]}`)
	if err := c.Unmarshal(items, new(scoringv1.ScoreItemIdsRequest)); err == nil || err.Error() != "items: holds more than 10 entries; the limit is 10" {
		t.Errorf("12 items with a list limit of 10: got %v; want that limit named", err)
	}
	// The limit is the message's field's: a list of the same name in another message takes the
	// general one.
	if err := c.Unmarshal(items, new(scoringv1.ScoreItemIdsBayesRequest)); err != nil {
		t.Errorf("12 items of a message without a limit of its own: got %v; want none (the general limit is 1,000)", err)
	}
}
