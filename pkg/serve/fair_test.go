package serve

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestFairAdmissionRoundRobin: with the budget room for one group call at a time, a client
// with four queued behind the one running cannot hold another client's single one behind all
// four: once the running one ends, the queues are served one call per client in turn. (The
// queues' order alone: internal/admission's TestFair tests; only a whole server shows the JSON
// front queueing each call by its token's client.)
func TestFairAdmissionRoundRobin(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MemoryBudget = 3 << 19 // one group call of 900 items at a time (1.16 MB of 1.5 MiB)
	limitsOf(cfg).MaxStudents = 1000
	cfg.AdmissionWait = time.Minute
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientsFile = filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n" +
		"  - clientId: flood\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"*\"]\n" +
		"  - clientId: single\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"*\"]\n"
	if err := os.WriteFile(cfg.ClientsFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startTestGroup(t, cfg)
	toks := map[string]string{"demo": h.token("demo", "demo-secret"), "flood": h.token("flood", clientSecret), "single": h.token("single", clientSecret)}
	group := echoGroupBody("slow", 900) // each holds until released
	if c := h.srv.gate.Budget.CostOfBody(h.srv.routes.ByMethod[throwawayGroup].Group, group); c > cfg.MemoryBudget || 2*c <= cfg.MemoryBudget {
		t.Fatalf("a group call costs %d; want one, not two, in the budget of %d", c, cfg.MemoryBudget)
	}
	done := make(chan string, 8)
	send := func(who string) {
		go func() {
			r, err := post(h.base, throwawayGroupPath, toks[who], bytes.NewReader(group))
			if err != nil || r.status != http.StatusOK {
				t.Errorf("%s: got %d %s %v; want 200", who, r.status, r.body, err)
			}
			done <- who
		}()
	}
	waiting := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); queued(t, h) != n; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("queued: got %d; want %d", queued(t, h), n)
			}
		}
	}
	send("demo")
	<-h.echo.started
	for i := range int64(4) {
		send("flood")
		waiting(i + 1)
	}
	send("single")
	waiting(5)
	var order []string
	for range 6 {
		h.echo.release <- struct{}{}
		order = append(order, <-done)
		if len(order) < 6 {
			<-h.echo.started // the next one admitted is running
		}
	}
	want := []string{"demo", "flood", "single", "flood", "flood", "flood"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("answered in order %v; want %v (single's one after one of flood's, not after all four)", order, want)
		}
	}
	if got := queued(t, h); got != 0 {
		t.Errorf("queued after all: %d; want 0", got)
	}
}

// queued is the requests waiting in their client's queue: yardstick_memory_budget_queued_requests.
func queued(t *testing.T, h *harness) int64 {
	return gauge(t, h, "yardstick_memory_budget_queued_requests", "")
}
