package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStatusRecorderSkipsInterim: a 100 Continue sent before the answer is not the answer's
// status; the first final status is.
func TestStatusRecorderSkipsInterim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codes []int
		want  int
	}{
		{"100 then 200", []int{http.StatusContinue, http.StatusOK}, http.StatusOK},
		{"103 then 400", []int{http.StatusEarlyHints, http.StatusBadRequest}, http.StatusBadRequest},
		{"200 then 500", []int{http.StatusOK, http.StatusInternalServerError}, http.StatusOK},
		{"only 100", []int{http.StatusContinue}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
			for _, c := range tc.codes {
				r.WriteHeader(c)
			}
			if r.code != tc.want {
				t.Errorf("code: got %d; want %d", r.code, tc.want)
			}
		})
	}
}
