package serve

import (
	"net/http"
	"strings"
	"testing"
)

// TestServiceListLimits: a list the service limits (WireRules.ListLimits) is decoded up to one
// entry past its limit, so that the handler can say by how much it is over, and no further: the
// front answers 400 naming the list.
func TestServiceListLimits(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	limitsOf(cfg).MaxItems = 2
	h := startTest(t, cfg)
	tok := "Bearer " + h.token("demo", "demo-secret")
	items := func(n int) string {
		return `{"text":"hi","items":[` + strings.TrimSuffix(strings.Repeat(`{"id":"L1","result":1},`, n), ",") + `]}`
	}
	for _, tc := range []struct {
		name string
		n    int
		want int
	}{
		{"the limit", 2, http.StatusOK},
		{"one past: the handler's to refuse", 3, http.StatusOK},
		{"two past: the front's", 4, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.post(throwawayPath, items(tc.n), "Authorization", tok)
			if r.status != tc.want {
				t.Fatalf("%d items: got %d %s; want %d", tc.n, r.status, r.body, tc.want)
			}
			if tc.want == http.StatusBadRequest && !strings.Contains(string(r.body), "holds more than 2 entries; the limit is 2") {
				t.Errorf("got %s; want the list's limit named", r.body)
			}
		})
	}
}
