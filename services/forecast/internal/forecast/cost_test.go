package forecast

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestBudgetCoversTheRealHandler: the admission budget's estimate of a group forecast is at least
// the heap this service's own handler allocates for it through the JSON front (the body, the
// decoded request, the math, the answer), measured with the garbage collector off so nothing is
// freed before it is counted. Heap figures mean nothing under the race detector; `make test` runs
// this test again without it.
func TestBudgetCoversTheRealHandler(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are meaningless under -race; make test runs this without it")
	}
	s := start(t)
	auth := "Bearer " + s.Token()
	student := map[string]func(i int) string{
		"objects": func(i int) string {
			return `{"priorAbility":` + strconv.Itoa(200+i%900) + `,"priorUncertainty":` + strconv.Itoa(40+i%50) + `,"elapsedDays":` + strconv.Itoa(i%365) + `}`
		},
		"compact arrays": func(i int) string {
			return `[` + strconv.Itoa(200+i%900) + `,` + strconv.Itoa(40+i%50) + `,` + strconv.Itoa(i%365) + `]`
		},
	}
	for _, form := range []string{"objects", "compact arrays"} {
		for _, n := range []int{1000, 10000, 100000} {
			var b strings.Builder
			b.WriteString(`{"studentData":[`)
			for i := 0; i < n; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(student[form](i))
			}
			b.WriteString(`],"testUncertainty":32.5,"cutLevels":[500,650,800]}`)
			body := []byte(b.String())
			estimate := s.Frame.Cost("/yardstick.forecast.v1.ForecastService/ForecastReadingGroup", int64(len(body)), true)

			runtime.GC()
			old := debug.SetGCPercent(-1)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			req := httptest.NewRequest(http.MethodPost, "/api/forecast/reading/group", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			s.Handler.ServeHTTP(w, req)
			runtime.ReadMemStats(&after)
			debug.SetGCPercent(old)
			if w.Code != http.StatusOK {
				t.Fatalf("%d students: got %d %s", n, w.Code, w.Body.String()[:200])
			}
			// The recorder's copy of the answer is the test's, not the service's: take it out.
			grown := int64(after.TotalAlloc-before.TotalAlloc) - int64(w.Body.Cap())
			if grown > estimate {
				t.Errorf("%d students as %s (%d bytes): the handler allocated %d bytes; the budget's estimate is %d", n, form, len(body), grown, estimate)
			}
			t.Logf("%d students as %s: allocated %.1f MB, estimate %.1f MB", n, form, float64(grown)/1e6, float64(estimate)/1e6)
		}
	}
}
