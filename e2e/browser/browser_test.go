//go:build browser

// Package browser drives /docs (Swagger UI) in headless Chromium against the real scoring
// binary, as a person would: open the page, authorize with the dev client, run a scoring call
// and read its 200 answer off the page; and (cors_test.go) a partner's page on another origin
// running the TypeScript client, allowed and refused by CORS. `make browser-test` runs it (the build tag keeps it out
// of `make test`); under CI=true a missing Chromium fails the test instead of skipping it.
//
// chromedp drives Chromium over the DevTools protocol from Go, with no driver binary or
// Node.js toolchain to install; it is the maintained Go library for this.
package browser

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/yardstick-dev/yardstick/e2e/internal/live"
)

var screenshot = flag.String("screenshot", "", "write a PNG of the executed call to this file")

// operation is the scoring call the test runs, by Swagger UI's deep-link id (tag, operationId).
const operation = "#operations-ScoringService-ScoringService_ScoreItemResults"

const requestBody = `{
  "items": [
    {"id": "L000100", "result": 1},
    {"id": "L000200", "result": 0},
    {"id": "L000300", "result": 1},
    {"id": "L000400", "result": 1}
  ]
}`

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install -y chromium); CI=true requires the browser test to run")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); make browser-test needs it")
	return ""
}

// browser starts a fresh headless Chromium and returns a tab's context, with a watch on what
// the page does that it must not.
func browser(t *testing.T, origin string) (context.Context, *watch) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first use starts the browser and must not carry a timeout (it would end the browser);
	// subscribing to the events is that first use.
	w := &watch{}
	w.listen(tab, origin)
	ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx, w
}

// watch records what the page does that it must not: requests to another origin, script
// errors, console and browser-log errors (Content-Security-Policy violations among them).
type watch struct {
	mu       sync.Mutex
	problems []string
	requests int
}

func (w *watch) add(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

func (w *watch) report(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Error(p)
	}
	if w.requests < 5 {
		t.Errorf("saw %d requests of the page; the watch is not working (want the page, its 3 files, the document, the calls)", w.requests)
	}
}

func (w *watch) listen(ctx context.Context, origin string) {
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	console := chromedp.Console(ctx)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.requests++
			w.mu.Unlock()
			u, err := url.Parse(ev.Request.URL)
			if err == nil && u.Scheme != "data" && u.Scheme+"://"+u.Host != origin {
				w.add("the page requested another origin: %s", ev.Request.URL)
			}
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				w.add("console %s: %s (%s)", m.Type, m.Text, m.URL)
			}
		}
	}()
}

// TestSwaggerUI: authorize with the dev client, execute a scoring call, find its 200 answer;
// once through the OAuth2 client-credentials flow (Swagger UI fetches the token; its page is
// the README's screenshot) and once by pasting a bearer token from /authToken.
func TestSwaggerUI(t *testing.T) {
	chromium(t) // before building the service: a missing browser fails (or skips) at once
	svc := live.Start(t, "scoring")
	flows := []struct {
		name       string
		authorize  func(*testing.T, context.Context, *live.Service)
		screenshot bool
	}{
		{"oauth2 client credentials", authorize, true},
		{"bearer token", authorizeBearer, false},
	}
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) { // one at a time: each runs a browser
			run(t, svc, f.authorize, f.screenshot && *screenshot != "")
		})
	}
}

// run opens /docs in a fresh browser, authorizes, executes the scoring call and checks the
// answer on the page.
func run(t *testing.T, svc *live.Service, authorize func(*testing.T, context.Context, *live.Service), shoot bool) {
	ctx, w := browser(t, svc.Base)
	defer w.report(t)

	err := chromedp.Do(ctx,
		chromedp.Navigate(svc.Base+"/docs"),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .info .title")),
	)
	if err != nil {
		t.Fatalf("open /docs: %v\n%s", err, svc.Output())
	}
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".swagger-ui .info .title")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "Yardstick scoring API") || !strings.Contains(title, live.Version) {
		t.Errorf("page title: got %q; want the scoring document of version %s", title, live.Version)
	}

	authorize(t, ctx, svc)

	step, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS(operation+" .opblock-summary-control")),
		chromedp.WaitVisible(chromedp.CSS(operation+" textarea.body-param__text")),
	)
	if err == nil {
		err = setTextarea(step, operation+" textarea.body-param__text", requestBody)
	}
	if err == nil {
		err = chromedp.Do(step,
			chromedp.Click(chromedp.CSS(operation+" button.execute")),
			chromedp.WaitVisible(chromedp.CSS(operation+" .live-responses-table tr.response .response-col_status")),
		)
	}
	if err != nil {
		failureScreenshot(t, ctx)
		t.Fatalf("execute %s: %v", operation, err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(operation+" .live-responses-table tr.response .response-col_status")))
	if err != nil {
		t.Fatal(err)
	}
	answer, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(operation+" .live-responses-table .response-col_description pre")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(status) != "200" {
		t.Fatalf("status on the page: got %q; want 200 (answer %s)", status, answer)
	}
	var m struct {
		Ability        *int   `json:"ability"`
		AbilityDisplay string `json:"abilityDisplay"`
		Framework      string `json:"framework"`
		APIVersion     string `json:"apiVersion"`
	}
	if err := json.Unmarshal([]byte(answer), &m); err != nil {
		t.Fatalf("answer on the page is not JSON: %v\n%s", err, answer)
	}
	if m.Ability == nil || !strings.HasSuffix(m.AbilityDisplay, "L") || m.Framework != "lexile" || m.APIVersion != live.Version {
		t.Errorf("answer on the page: got %s; want a lexile measure of version %s", answer, live.Version)
	}

	if shoot {
		// The viewport from the operation's title down: request body, Execute, the 200 answer.
		scroll := fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: "start"}); window.scrollBy(0, -10); true`, operation)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1500)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](scroll)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.MkdirAll(filepath.Dir(*screenshot), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", *screenshot)
	}
}

// authorize logs in through the Authorize dialog with the dev client (demo / demo-secret):
// Swagger UI runs the document's OAuth2 client-credentials flow against /authToken.
func authorize(t *testing.T, ctx context.Context, svc *live.Service) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Do(step,
		chromedp.Click(chromedp.CSS(".scheme-container button.authorize")),
		chromedp.WaitVisible(chromedp.ID("client_id_clientCredentials")),
		chromedp.SendKeys(chromedp.ID("client_id_clientCredentials"), "demo"),
		chromedp.SendKeys(chromedp.ID("client_secret_clientCredentials"), "demo-secret"),
		chromedp.Click(chromedp.CSS(`.modal-ux button[aria-label="Apply given OAuth2 credentials"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.modal-ux button[aria-label="Remove authorization"]`)),
		chromedp.Click(chromedp.CSS(".modal-ux button.btn-done")),
		chromedp.WaitNotPresent(chromedp.CSS(".modal-ux")),
	)
	if err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".auth-container .errors")).map(e => e.innerText).join("\n")`))
		failureScreenshot(t, ctx)
		t.Fatalf("authorize with client credentials at /authToken: %v\nerrors shown: %s\nservice log:\n%s", err, shown, svc.Output())
	}
}

// authorizeBearer pastes a token of the dev client, fetched from /authToken, into the bearer
// scheme of the Authorize dialog.
func authorizeBearer(t *testing.T, ctx context.Context, svc *live.Service) {
	t.Helper()
	resp, err := http.Post(svc.Base+"/authToken", "application/json", strings.NewReader(`{"clientId":"demo","clientSecret":"demo-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("authToken: got %d (%v); want 200", resp.StatusCode, err)
	}
	step, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS(".scheme-container button.authorize")),
		chromedp.WaitVisible(chromedp.ID("auth-bearer-value")),
		chromedp.SendKeys(chromedp.ID("auth-bearer-value"), tok.AccessToken),
		chromedp.Click(chromedp.CSS(`.modal-ux button[aria-label="Apply credentials"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.modal-ux button[aria-label="Remove authorization"]`)),
		chromedp.Click(chromedp.CSS(".modal-ux button.btn-done")),
		chromedp.WaitNotPresent(chromedp.CSS(".modal-ux")),
	)
	if err != nil {
		failureScreenshot(t, ctx)
		t.Fatalf("authorize with a bearer token: %v", err)
	}
}

// setTextarea replaces a React-controlled textarea's text the way typing would: through the
// native value setter, then an input event React listens to.
func setTextarea(ctx context.Context, sel, text string) error {
	js := fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
		set.call(el, %q);
		el.dispatchEvent(new Event("input", { bubbles: true }));
		return el.value;
	})()`, sel, text)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err == nil && got != text {
		err = fmt.Errorf("textarea %s holds %q after setting it", sel, got)
	}
	return err
}

// failureScreenshot saves the whole page beside the -screenshot file (or in the test's temp
// directory), so a failure shows what the page showed.
func failureScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("failure screenshot: %v", err)
		return
	}
	path := filepath.Join(t.TempDir(), "failure.png")
	if *screenshot != "" {
		path = strings.TrimSuffix(*screenshot, ".png") + "-failure.png"
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("failure screenshot: %v", err)
		return
	}
	t.Logf("the page at the failure: %s", path)
}
