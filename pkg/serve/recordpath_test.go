package serve

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRecordPathAsCallPath: a record's path is matched as a call's: one trailing slash is the same
// path (200 for both), two are not (404 for both).
func TestRecordPathAsCallPath(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	auth := "Bearer " + h.token("batcher", clientSecret)
	const body = `{"text":"x"}`
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"as declared", throwawayPath, 200},
		{"one trailing slash", throwawayPath + "/", 200},
		{"two trailing slashes", throwawayPath + "//", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			call := h.post(tc.path, body, "Authorization", auth)
			r := h.do(http.MethodPost, throwawayBatchPath, ndjson, `{"id":"r","path":"`+tc.path+`","body":`+body+"}\n", "Authorization", auth)
			line, _, _ := strings.Cut(string(r.body), "\n")
			if call.status != tc.status || !strings.HasPrefix(line, `{"id":"r","status":`+strconv.Itoa(tc.status)+`,`) {
				t.Fatalf("got the call %d, the record %s; want both %d", call.status, line, tc.status)
			}
		})
	}
}
