//go:build browser

package browser

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/yardstick-dev/yardstick/e2e/internal/live"
)

// page is the web page of a partner's app, served from an origin of its own: it loads the
// TypeScript client as built (clients/typescript/dist, its one dependency by an import map),
// makes a call and runs a batch through stream(), and leaves what happened in window.outcome.
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>partner app</title>
<script type="importmap">{"imports": {"openapi-fetch": "/node_modules/openapi-fetch/dist/index.mjs"}}</script>
</head><body>
<script type="module">
import { createScoringClient } from "/client/index.js";
const base = new URLSearchParams(location.search).get("service");
const outcome = { origin: location.origin };
try {
  const client = createScoringClient({ baseUrl: base, clientId: "demo", clientSecret: "demo-secret" });
  const { data, error, response } = await client.POST("/api/score/items/idsWithResults/standard", {
    body: { items: [{ id: "L000100", result: 1 }, { id: "L000200", result: 0 }, { id: "L000300", result: 1 }] },
  });
  outcome.call = { status: response.status, abilityDisplay: data?.abilityDisplay, error,
    requestId: response.headers.get("X-Request-Id") };
  const items = [{ id: "L000100", result: 1 }, { id: "L000200", result: 0 }];
  function* records(n) {
    for (let i = 0; i < n; i++) yield { id: "r" + i, path: "/api/score/items/idsWithResults/standard", body: { items } };
  }
  const ids = [];
  for await (const line of client.stream("/api/score/batch", records(3000))) {
    if ("summary" in line) outcome.summary = line.summary;
    else ids.push(line.id + ":" + line.status);
  }
  outcome.ordered = ids.every((s, i) => s === "r" + i + ":200");
  outcome.answers = ids.length;
} catch (e) {
  outcome.error = String(e);
}
window.outcome = outcome;
</script></body></html>`

// partnerApp serves page and the client's files on a loopback port of its own: another origin
// than the service's.
func partnerApp(t *testing.T) string {
	t.Helper()
	root := filepath.Join(repoRoot(t), "clients", "typescript")
	dist, deps := filepath.Join(root, "dist"), filepath.Join(root, "node_modules", "openapi-fetch")
	for _, p := range []string{filepath.Join(dist, "index.js"), filepath.Join(deps, "dist", "index.mjs")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v (make browser-test builds the TypeScript client first: clients/typescript/ci.sh build)", p, err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/app", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	})
	mux.Handle("/client/", http.StripPrefix("/client/", http.FileServer(http.Dir(dist))))
	mux.Handle("/node_modules/openapi-fetch/", http.StripPrefix("/node_modules/openapi-fetch/", http.FileServer(http.Dir(deps))))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + lis.Addr().String()
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		if dir == filepath.Dir(dir) {
			t.Fatal("no go.work above the test's directory")
		}
	}
}

type outcome struct {
	Origin string `json:"origin"`
	Call   *struct {
		Status         int    `json:"status"`
		AbilityDisplay string `json:"abilityDisplay"`
		RequestID      string `json:"requestId"`
	} `json:"call"`
	Summary *struct{ Records, OK, Failed int } `json:"summary"`
	Ordered bool                               `json:"ordered"`
	Answers int                                `json:"answers"`
	Error   string                             `json:"error"`
}

// openApp opens the partner's page against service in a fresh browser and waits for its outcome.
func openApp(t *testing.T, app, service string) outcome {
	t.Helper()
	ctx, _ := browser(t, app) // the page calls another origin by design: the watch's report is not read
	err := chromedp.Do(ctx, chromedp.Navigate(app+"/app?service="+service))
	var raw string
	if err == nil {
		raw, err = chromedp.Run(ctx, chromedp.Poll[string](`window.outcome !== undefined && JSON.stringify(window.outcome)`, chromedp.WithPollingTimeout(90*time.Second)))
	}
	if err != nil {
		failureScreenshot(t, ctx)
		t.Fatalf("the partner's page at %s: %v", app, err)
	}
	var o outcome
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		t.Fatalf("outcome %s: %v", raw, err)
	}
	return o
}

// TestCORSFromAnotherOrigin: a page on an origin the service allows logs in, calls a path and
// runs a 3,000-record batch through the TypeScript client, reading the exposed X-Request-Id; a
// page on an origin the service does not list fails in the browser, before any answer.
func TestCORSFromAnotherOrigin(t *testing.T) {
	chromium(t)
	allowed, refused := partnerApp(t), partnerApp(t)
	svc := live.StartWith(t, "scoring", "YARDSTICK_CORS_ORIGINS="+allowed)

	t.Run("allowed origin", func(t *testing.T) {
		o := openApp(t, allowed, svc.Base)
		if o.Error != "" || o.Call == nil {
			t.Fatalf("page: got error %q; want a call and a batch\nservice log:\n%s", o.Error, svc.Output())
		}
		if o.Call.Status != http.StatusOK || !strings.HasSuffix(o.Call.AbilityDisplay, "L") {
			t.Errorf("call: got %d %q; want 200 and a lexile measure", o.Call.Status, o.Call.AbilityDisplay)
		}
		if len(o.Call.RequestID) == 0 {
			t.Errorf("X-Request-Id read by the page: got none; want the exposed header")
		}
		if o.Summary == nil || o.Summary.Records != 3000 || o.Summary.OK != 3000 || o.Answers != 3000 || !o.Ordered {
			t.Errorf("batch: got summary %+v, %d answers, in order %v; want 3000 records answered 200 in order", o.Summary, o.Answers, o.Ordered)
		}
	})
	t.Run("origin not listed", func(t *testing.T) {
		o := openApp(t, refused, svc.Base)
		if o.Call != nil || !strings.Contains(o.Error, "Failed to fetch") {
			t.Errorf("page: got call %+v error %q; want the browser to refuse the login (TypeError: Failed to fetch)", o.Call, o.Error)
		}
	})
}
