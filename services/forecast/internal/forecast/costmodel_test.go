package forecast

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

const mathGroup = "/yardstick.forecast.v1.ForecastService/ForecastMathGroup"

// frameCost is the cost of a group forecast as the frame computed it before the model was the
// service's (its constants written out), over the default limit of 100,000 students: 256 KiB, and
// the more of the heap per byte and per student (at most the limit) the body can hold; once a
// JSON body is read (brackets ≥ 0), the students are the brackets it opens, at most one every 8 bytes.
func frameCost(n int64, json bool, brackets int64) int64 {
	perByte, perStudent, students := int64(24), int64(320), n/2
	if json {
		perByte, perStudent, students = 16, 1000, n/8
	}
	if brackets >= 0 {
		students = min(students, brackets)
	}
	return 256<<10 + max(perByte*n, perStudent*min(students, 100000))
}

// TestCostModelKeepsTheFrameFigures: the service's model costs every size of group forecast, on
// both group rpcs and both fronts, as the frame's constants did: at the edges of the student limit
// and where the cost per student gives way to the cost per byte (JSON 6,250,000 bytes, protobuf
// 1,333,333.3), and an rpc that is not a group call by its size alone (30 per byte from 64 KiB).
func TestCostModelKeepsTheFrameFigures(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, method := range []string{readingGroup, mathGroup} {
		for _, json := range []bool{true, false} {
			for _, n := range []int64{0, 1, 7, 8, 3000, 64 << 10, 799999, 800000, 800008, 6249999, 6250000, 6250001, 7000000,
				199999, 200000, 200002, 1333333, 1333334, 2900035} {
				if got, want := s.Frame.Cost(method, n, json), frameCost(n, json, -1); got != want {
					t.Errorf("%s, %d bytes (json %v): got %d; want %d", method, n, json, got, want)
				}
			}
		}
	}
	single := "/yardstick.forecast.v1.ForecastService/ForecastReading"
	for n, want := range map[int64]int64{64<<10 - 1: 0, 64 << 10: 30 * 64 << 10, 1 << 20: 30 << 20} {
		if got := s.Frame.Cost(single, n, true); got != want {
			t.Errorf("%s, %d bytes: got %d; want %d", single, n, got, want)
		}
	}
}

// TestCostModelKeepsTheFrameFiguresOnceRead: a JSON group forecast's body, once read, holds of the
// budget while its handler runs what the frame's constants gave for its brackets.
func TestCostModelKeepsTheFrameFiguresOnceRead(t *testing.T) {
	s, admitted := startMetered(t, readingGroup)
	auth := "Bearer " + s.Token()
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"objects and an array", []byte(group)},
		{"1,000 typical students", groupRequest(1000, groupShapes[0].student)},
		{"1,000 shortest arrays: a student every 8 bytes", groupRequest(1000, func(int) string { return `[1,1,1]` })},
		{"a student with nested brackets", []byte(`{"studentData":[[1,1,1]],"testUncertainty":30,"cutLevels":[500]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := admitted(t, func() {
				req, _ := http.NewRequest(http.MethodPost, "/api/forecast/reading/group", bytes.NewReader(tc.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				w := &discardWriter{header: http.Header{}}
				s.Handler.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					t.Errorf("status: got %d; want 200", w.code)
				}
			})
			brackets := int64(strings.Count(string(tc.body), "[") + strings.Count(string(tc.body), "{"))
			if want := frameCost(int64(len(tc.body)), true, brackets); got != want {
				t.Errorf("admitted: got %d; want %d (%d bytes, %d brackets)", got, want, len(tc.body), brackets)
			}
		})
	}
}
