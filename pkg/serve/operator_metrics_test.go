package serve

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scrape reads /metrics and returns each sample by its name and labels as the text format writes
// them, e.g. `yardstick_ready{service="scoring"}`.
func scrape(t *testing.T, h *harness) map[string]float64 {
	t.Helper()
	r := h.do(http.MethodGet, "/metrics", "", "")
	if r.status != http.StatusOK {
		t.Fatalf("/metrics: got %d", r.status)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(r.body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// sample is the value of the one sample named name whose labels match re; it fails the test
// when there is not exactly one.
func sample(t *testing.T, m map[string]float64, name, re string) (string, float64) {
	t.Helper()
	rx := regexp.MustCompile("^" + regexp.QuoteMeta(name) + `\{.*` + re)
	var keys []string
	for k := range m {
		if rx.MatchString(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) != 1 {
		t.Fatalf("%s matching %s: got %d samples %v; want one", name, re, len(keys), keys)
	}
	return keys[0], m[keys[0]]
}

// TestOperatorSeries: on a running server, the series an operator reads answer the questions
// they are for — requests in flight per front, readiness through a drain, logins by outcome, the
// signing key and its date, what each reload took or refused.
func TestOperatorSeries(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ShutdownDelay = 2 * time.Second // readiness is false while the listeners still serve
	cfg.ClientsFile = filepath.Join(t.TempDir(), "clients.yaml")
	writeFile := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(cfg.ClientsFile, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("clients: []\n")
	var mu sync.Mutex
	content := struct {
		version string
		err     error
	}{version: "aaaaaaaaaaaa"}
	registerThrowaway(t)
	echo := newEchoServer()
	svc := echo.service()
	svc.Reload = func() (bool, error) { mu.Lock(); defer mu.Unlock(); return content.err == nil, content.err }
	svc.Version = func() string { mu.Lock(); defer mu.Unlock(); return content.version }
	h := startService(t, cfg, svc)
	tok := h.token("demo", "demo-secret")

	t.Run("ready and loaded at start", func(t *testing.T) {
		m := scrape(t, h)
		if _, v := sample(t, m, "yardstick_ready", ""); v != 1 {
			t.Errorf("yardstick_ready: got %v; want 1", v)
		}
		if k, _ := sample(t, m, "yardstick_reload_info", `source="content"`); !strings.Contains(k, `hash="aaaaaaaaaaaa"`) {
			t.Errorf("content version: got %s; want hash aaaaaaaaaaaa", k)
		}
		if k, _ := sample(t, m, "yardstick_reload_info", `source="clients"`); !strings.Contains(k, `hash="`+h.srv.issuer.Version()+`"`) {
			t.Errorf("clients version: got %s; want the issuer's %s", k, h.srv.issuer.Version())
		}
		// Dev mode's ephemeral key: signing, dated 2160 h (the default lifetime) after its kid.
		keys := h.srv.issuer.Keys()
		if len(keys) != 1 || keys[0].Created.IsZero() {
			t.Fatalf("keys: got %+v; want one dated key", keys)
		}
		sample(t, m, "yardstick_signing_key_info", `kid="`+keys[0].Kid+`"`)
		if _, v := sample(t, m, "yardstick_signing_key_expiry_timestamp_seconds", `kid="`+keys[0].Kid+`"`); v != float64(keys[0].Created.Add(2160*time.Hour).Unix()) {
			t.Errorf("key expiry: got %v; want the kid's time + 2160h", v)
		}
	})

	t.Run("requests in flight", func(t *testing.T) {
		done := make(chan response, 1)
		go func() {
			done <- h.post(throwawayPath, `{"text":"slow"}`, "Authorization", "Bearer "+tok)
		}()
		<-echo.started
		m := scrape(t, h)
		if _, v := sample(t, m, "yardstick_requests_in_flight", `front="http"`); v != 2 {
			t.Errorf("http in flight during a slow call: got %v; want 2 (it and the scrape)", v)
		}
		if _, v := sample(t, m, "yardstick_requests_in_flight", `front="grpc"`); v != 0 {
			t.Errorf("grpc in flight: got %v; want 0 (a JSON call is the http front's)", v)
		}
		echo.release <- struct{}{}
		if r := <-done; r.status != http.StatusOK {
			t.Fatalf("slow call: got %d", r.status)
		}
		if _, v := sample(t, scrape(t, h), "yardstick_requests_in_flight", `front="http"`); v != 1 {
			t.Errorf("http in flight after it: got %v; want 1 (the scrape)", v)
		}
	})

	t.Run("logins by outcome", func(t *testing.T) {
		before := scrape(t, h)
		h.post("/authToken", `{"clientId":"demo","clientSecret":"wrong"}`)
		h.token("demo", "demo-secret")
		after := scrape(t, h)
		for outcome, want := range map[string]float64{"invalid_client": 1, "success": 1, "throttled": 0} {
			_, b := sample(t, before, "yardstick_logins_total", `outcome="`+outcome+`"`)
			_, a := sample(t, after, "yardstick_logins_total", `outcome="`+outcome+`"`)
			if a-b != want {
				t.Errorf("logins %s: grew by %v; want %v", outcome, a-b, want)
			}
		}
	})

	t.Run("reloads", func(t *testing.T) {
		mu.Lock()
		content.err = errors.New("load content bundle /c: items.csv:3: difficulty: not a number")
		mu.Unlock()
		replaceWithPipe(t, cfg.ClientsFile)
		h.srv.Reload()
		m := scrape(t, h)
		for _, c := range []struct{ source, cause string }{{"content", "invalid"}, {"clients", "special_file"}} {
			if _, v := sample(t, m, "yardstick_reload_failures_total", fmt.Sprintf(`cause="%s".*source="%s"`, c.cause, c.source)); v != 1 {
				t.Errorf("%s reload failures (%s): got %v; want 1", c.source, c.cause, v)
			}
		}
		if k, _ := sample(t, m, "yardstick_reload_info", `source="content"`); !strings.Contains(k, `hash="aaaaaaaaaaaa"`) {
			t.Errorf("after a failed reload: content version %s; want the last good one, aaaaaaaaaaaa", k)
		}
		if err := os.Remove(cfg.ClientsFile); err != nil {
			t.Fatal(err)
		}
		writeFile("clients: []\n")
		mu.Lock()
		content.err, content.version = nil, "bbbbbbbbbbbb"
		mu.Unlock()
		before := time.Now()
		h.srv.Reload()
		m = scrape(t, h)
		if k, _ := sample(t, m, "yardstick_reload_info", `source="content"`); !strings.Contains(k, `hash="bbbbbbbbbbbb"`) {
			t.Errorf("after a good reload: content version %s; want bbbbbbbbbbbb alone", k)
		}
		if _, v := sample(t, m, "yardstick_reload_last_success_timestamp_seconds", `source="clients"`); v < float64(before.Unix()) {
			t.Errorf("clients last success %v; want at or after %d", v, before.Unix())
		}
	})

	t.Run("not ready while draining", func(t *testing.T) {
		h.cancel()
		deadline := time.Now().Add(time.Second)
		for {
			_, v := sample(t, scrape(t, h), "yardstick_ready", "")
			if v == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("yardstick_ready still %v 1 s into the drain; want 0", v)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
