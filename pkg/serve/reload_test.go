package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestReloadLogs: a reload that changed the clients logs one INFO line, an unchanged one
// nothing; a named pipe at the clients path is one ERROR line naming it, the reload returns,
// and the client removed once the pipe is replaced loses its access at that reload.
func TestReloadLogs(t *testing.T) {
	t.Parallel()
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	entry := func(id string) string {
		return "  - clientId: " + id + "\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"*\"]\n"
	}
	cfg := testConfig(t)
	cfg.ClientsFile = filepath.Join(t.TempDir(), "clients.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(cfg.ClientsFile, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("clients:\n" + entry("reader"))
	var content struct {
		changed bool
		err     error
	}
	registerThrowaway(t)
	svc := newEchoServer().service()
	svc.Reload = func() (bool, error) { return content.changed, content.err }
	h := startService(t, cfg, svc)
	rl := &reloadLog{h: h}
	reload := func() []map[string]any { t.Helper(); return rl.reload(t) }
	reload() // past the start-up lines
	loginStatus := func(id string) int {
		t.Helper()
		return h.post("/authToken", `{"clientId":"`+id+`","clientSecret":"`+secret+`"}`).status
	}

	if got := reload(); len(got) != 0 {
		t.Errorf("unchanged: got %v; want no log line", got)
	}

	write("clients:\n" + entry("reader") + entry("writer"))
	got := reload()
	if len(got) != 1 || got[0]["level"] != "INFO" || got[0]["msg"] != "clients and keys reloaded" ||
		!strings.HasPrefix(got[0]["loaded"].(string), "3 clients, 1 key (signing kid=dev-") {
		t.Errorf("a client added: got %v; want one INFO line, clients and keys reloaded, loaded 3 clients, 1 key ...", got)
	}
	if got := reload(); len(got) != 0 {
		t.Errorf("unchanged again: got %v; want no log line", got)
	}

	replaceWithPipe(t, cfg.ClientsFile)
	got = reload()
	if len(got) != 1 || got[0]["level"] != "ERROR" || got[0]["msg"] != "reload clients and keys: keeping the last good ones" ||
		!strings.Contains(got[0]["error"].(string), cfg.ClientsFile+": is a named pipe, not a regular file") {
		t.Errorf("a named pipe at the clients path: got %v; want one ERROR line naming it", got)
	}
	if status := loginStatus("writer"); status != http.StatusOK {
		t.Errorf("writer's login with the pipe in place: got %d; want 200 (the last good clients)", status)
	}

	if err := os.Remove(cfg.ClientsFile); err != nil {
		t.Fatal(err)
	}
	write("clients:\n" + entry("reader")) // writer removed
	content.changed = true
	got = reload()
	if len(got) != 2 || got[0]["msg"] != "clients and keys reloaded" || got[1]["level"] != "INFO" || got[1]["msg"] != "content bundle reloaded" {
		t.Errorf("the pipe replaced, writer removed, content changed: got %v; want the two INFO lines", got)
	}
	if status := loginStatus("writer"); status != http.StatusUnauthorized {
		t.Errorf("writer's login after its removal: got %d; want 401", status)
	}

	content.changed, content.err = false, errors.New("items.csv:3: broken")
	got = reload()
	if len(got) != 1 || got[0]["level"] != "ERROR" || got[0]["msg"] != "reload content: keeping the last good bundle" || got[0]["error"] != "items.csv:3: broken" {
		t.Errorf("a broken bundle: got %v; want one ERROR line", got)
	}
}

// reloadLog runs reloads of a harness's server and reads the log lines they write.
type reloadLog struct {
	h    *harness
	seen int // log lines read so far
}

// reload runs one reload and returns the log lines about reloads written since the last call
// (requests in between log lines of their own), as JSON objects.
func (rl *reloadLog) reload(t *testing.T) []map[string]any {
	t.Helper()
	done := make(chan struct{})
	go func() {
		rl.h.srv.Reload()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Reload did not return")
	}
	lines := strings.Split(strings.TrimSpace(rl.h.logs.String()), "\n")
	var out []map[string]any
	for _, line := range lines[rl.seen:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if msg, _ := m["msg"].(string); strings.Contains(msg, "reload") {
			out = append(out, m)
		}
	}
	rl.seen = len(lines)
	return out
}

// replaceWithPipe puts a named pipe where the file path was.
func replaceWithPipe(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
