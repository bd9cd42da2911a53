package jsonwire

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestDecodeAllocations pins the fast path's allocation counts, which do not grow with the number
// of elements: a regression to per-field pointers (≈ 6 per item) would fail here. Counts, not
// times: they do not flake on a busy machine.
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
	if allocs > 12 {
		t.Errorf("40-item request: %v allocations; want at most 12", allocs)
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
	if allocs > 40 {
		t.Errorf("1,000-student group: %v allocations; want at most 40", allocs)
	}
	if d := g.GetStudentData()[999]; d.GetElapsedDays() != 999 || d.GetPriorAbility() != 500 {
		t.Errorf("student 999: got %v; want [500,40,999]", d)
	}
}
