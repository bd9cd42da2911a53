package batch

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
)

// TestGroupStreamPaced: a group stream whose context carries a client's pacer (rate 20, burst 1)
// answers every student, none 429, at the client's rate: 11 students take at least 500 ms.
func TestGroupStreamPaced(t *testing.T) {
	t.Parallel()
	l, err := quota.New(quota.Config{Service: "forecast", Rate: 20, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := l.Register(reg); err != nil {
		t.Fatal(err)
	}
	svc := groupService{fw: lexile(t)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, slot, err := l.OpenStream(r.Context(), "acme")
		if err != nil {
			t.Error(err)
			return
		}
		defer slot.Done()
		_, _ = ServeGroup(ctx, w, r.Body, svc.open, Options{})
	}))
	t.Cleanup(srv.Close)
	body := `{"testUncertainty": 35, "cutLevels": [400, 750, 1100]}` + "\n" + strings.Repeat("[500, 60, 30]\n", 11)
	start := time.Now()
	resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all := new(bytes.Buffer)
	_, _ = all.ReadFrom(resp.Body)
	took := time.Since(start)
	got := lines(all.Bytes())
	if resp.StatusCode != 200 || len(got) != 12 || strings.Contains(all.String(), `"status":429`) {
		t.Fatalf("got %d, %d lines:\n%s\nwant 200, 11 students and the group, none 429", resp.StatusCode, len(got), all)
	}
	if took < 450*time.Millisecond {
		t.Errorf("11 students at 20 a second, burst 1: took %s; want at least 500ms", took)
	}
	slowed := `yardstick_client_throttled_total{client="other",reason="stream",service="forecast"}`
	if n := gathered(t, reg, slowed); n < 8 {
		t.Errorf("students slowed: got %.0f; want most of the 10 after the first", n)
	}
}

// gathered is the value of the one series of reg written as series (name{labels, sorted}).
func gathered(t *testing.T, reg *prometheus.Registry, series string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			if f.GetName()+"{"+strings.Join(labels, ",")+"}" == series {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
