package monitoring

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	"github.com/yardstick-dev/yardstick/e2e/internal/live"
	"github.com/yardstick-dev/yardstick/internal/proc"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// component is the monitoring component, seen from this package's directory.
var component = filepath.Join("..", "..", "deploy", "k8s", "components", "monitoring")

// window replaces the dashboard's $__rate_interval: it spans the whole load, so that every
// route's rate and latency quantile are taken over samples from before and after it.
const window = "40s"

// call is one kind of request of the load, sent n times.
type call struct {
	front, route string
	n            int
	send         func(ctx context.Context) error
}

// TestDashboardAndRulesAgainstRealPrometheus is the test the package doc describes. It needs the
// prometheus and promtool binaries and fails without them (CI installs them: .ci/run).
func TestDashboardAndRulesAgainstRealPrometheus(t *testing.T) {
	promBin, promtool := needed(t, "prometheus"), needed(t, "promtool")

	services := map[string]*live.Service{}
	for _, name := range []string{"scoring", "forecast"} {
		services[name] = live.Start(t, name) // built first, then run until the test ends
	}
	// Everything after the builds is bounded: loopback only, under a minute.
	began := time.Now()
	defer func() { t.Logf("after the builds: %v", time.Since(began).Round(time.Millisecond)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prom := startPrometheus(t, ctx, promBin, []string{hostOf(services["scoring"].Base), hostOf(services["forecast"].Base)})
	prom.waitForTargets(t, ctx, 2)
	start := time.Now()

	calls := map[string][]call{
		"scoring":  scoringLoad(t, ctx, services["scoring"]),
		"forecast": forecastLoad(t, ctx, services["forecast"]),
	}
	for name, cs := range calls {
		sendAll(t, ctx, name, cs)
	}
	// Two scrapes after the last request, and one rule evaluation after those.
	sleep(ctx, 3*time.Second)
	t.Logf("load sent in %v", time.Since(start).Round(time.Millisecond))

	t.Run("promtool check metrics", func(t *testing.T) {
		for name, s := range services {
			checkMetrics(t, ctx, promtool, name, s.Base)
		}
	})
	t.Run("dashboard queries", func(t *testing.T) {
		dashboardQueries(t, ctx, prom, calls)
	})
	t.Run("rules", func(t *testing.T) {
		rules(t, ctx, prom)
	})
}

// needed finds a binary of Debian's prometheus package, or fails saying how to install it.
func needed(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: this test runs a real Prometheus and promtool (apt-get install prometheus; .ci/run installs it in CI)", name)
	}
	return p
}

func hostOf(base string) string { return strings.TrimPrefix(base, "http://") }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// prometheus is a running Prometheus server.
type prometheus struct {
	base string // http://127.0.0.1:port
	out  *bytes.Buffer
}

// startPrometheus runs prometheus on a free loopback port with a temporary data directory,
// scraping targets' /metrics every second and evaluating the component's rules every second,
// until the test ends.
func startPrometheus(t *testing.T, ctx context.Context, bin string, targets []string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "yardstick.rules.yaml"), ruleFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - yardstick.rules.yaml
scrape_configs:
  - job_name: yardstick
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	var outMu sync.Mutex
	args := []string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--log.level=warn"}
	pp, err := proc.Start(bin, args, proc.Options{Env: os.Environ(), Output: lockedWriter{&outMu, out}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pp.Stop(10 * time.Second); errors.Is(err, proc.ErrKilled) {
			t.Errorf("prometheus: %v", err)
		}
	})
	p := &prometheus{base: "http://" + addr, out: out}
	ready := func(context.Context) error {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	}
	if err := pp.WaitReady(ctx, 100*time.Millisecond, ready); err != nil {
		outMu.Lock()
		defer outMu.Unlock()
		t.Fatalf("prometheus: %v:\n%s", err, out)
	}
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// ruleFile is the PrometheusRule's spec as a plain rule file, as the Operator (and make
// check-alerts) would write it.
func ruleFile(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(component, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind string    `yaml:"kind"`
		Spec yaml.Node `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil || doc.Kind != "PrometheusRule" {
		t.Fatalf("prometheusrule.yaml: kind %q, %v", doc.Kind, err)
	}
	out, err := yaml.Marshal(&doc.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitForTargets waits until Prometheus has scraped n targets successfully.
func (p *prometheus) waitForTargets(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for {
		var res struct {
			ActiveTargets []struct {
				Health    string `json:"health"`
				ScrapeURL string `json:"scrapeUrl"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		}
		err := p.get(ctx, "/api/v1/targets", nil, &res)
		up := 0
		var last []string
		for _, tg := range res.ActiveTargets {
			if tg.Health == "up" {
				up++
			}
			last = append(last, fmt.Sprintf("%s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError))
		}
		if err == nil && up == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus scrapes %d of %d targets up (%v): %v\n%s", up, n, err, last, p.out)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// get calls Prometheus's HTTP API and decodes the data of a success.
func (p *prometheus) get(ctx context.Context, path string, q url.Values, data any) error {
	u := p.base + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) float() float64 {
	v, _ := s.Value[1].(string)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// query runs an instant query now and returns its samples (a scalar as one sample).
func (p *prometheus) query(ctx context.Context, expr string) ([]sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var v []sample
		return v, json.Unmarshal(data.Result, &v)
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(data.Result, &s); err != nil {
			return nil, err
		}
		return []sample{{Value: s}}, nil
	}
	return nil, fmt.Errorf("result type %s; want a vector", data.ResultType)
}

// --- the load -------------------------------------------------------------------------------

// sendAll sends every call n times from 4 workers and wants each to succeed as the call expects.
func sendAll(t *testing.T, ctx context.Context, service string, calls []call) {
	t.Helper()
	type job struct {
		c call
		i int
	}
	jobs := make(chan job)
	var mu sync.Mutex
	failures := map[string]int{}
	var firstErr = map[string]error{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for j := range jobs {
				if err := j.c.send(ctx); err != nil {
					mu.Lock()
					key := j.c.front + " " + j.c.route
					failures[key]++
					if firstErr[key] == nil {
						firstErr[key] = err
					}
					mu.Unlock()
				}
			}
		})
	}
	// Each kind spread evenly over about 3 s, interleaved with the others, so that several
	// scrapes (1 s apart) see every counter grow: a counter first scraped at its final value has
	// a rate of 0.
	most := 0
	for _, c := range calls {
		most = max(most, c.n)
	}
	for i := range most {
		for _, c := range calls {
			if (i+1)*c.n/most > i*c.n/most {
				jobs <- job{c, i}
			}
		}
		if i%10 == 9 {
			sleep(ctx, 3*time.Second/time.Duration(max(1, most/10)))
		}
	}
	close(jobs)
	wg.Wait()
	for k, n := range failures {
		t.Errorf("%s %s: %d calls failed, the first: %v", service, k, n, firstErr[k])
	}
}

// postJSON posts body to base+path with the token (none if empty) and wants status want.
func postJSON(ctx context.Context, base, path, token, body string, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: %s, want %d: %s", path, resp.Status, want, b)
	}
	return nil
}

// devToken logs in as the dev-mode demo client over JSON.
func devToken(t *testing.T, ctx context.Context, base string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/authToken",
		strings.NewReader(`{"clientId":"demo","clientSecret":"demo-secret"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("POST %s/authToken: %s, no accessToken (%v)", base, resp.Status, err)
	}
	return tok.AccessToken
}

// grpcConn dials a service's gRPC port and logs in over IssueToken; ctxs carry the token.
func grpcConn(t *testing.T, ctx context.Context, addr string) (*grpc.ClientConn, context.Context) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	tok, err := authv1.NewTokenServiceClient(cc).IssueToken(ctx, &authv1.IssueTokenRequest{
		ClientId: proto.String("demo"), ClientSecret: proto.String("demo-secret")})
	if err != nil {
		t.Fatalf("IssueToken at %s: %v", addr, err)
	}
	return cc, metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok.GetAccessToken())
}

const (
	badLogin    = `{"clientId":"demo","clientSecret":"wrong"}`
	scaleScore  = `{"linkId":"STATE-READ-2026","scaleScore":"540","scaleSem":18}`
	itemIDs     = `{"items":[{"id":"Q000001"},{"id":"Q000002"},{"id":"Q000003"},{"id":"Q000004"}],"numberCorrect":3}`
	itemResults = `{"items":[{"id":"L000001","result":1},{"id":"L000002","result":1},{"id":"L000003","result":0},{"id":"L000004","result":1},{"id":"L000005","result":0}]}`
	bayes       = `{"items":[{"difficulty":650,"count":4},{"difficulty":720},{"difficulty":800,"count":5}],"numberCorrect":6,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`
	reading     = `{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800]}`
	group       = `{"studentData":[{"priorAbility":640,"priorUncertainty":70,"elapsedDays":180},[420,55,90]],"testUncertainty":32.5,"cutLevels":[500,650,800]}`
	comprehend  = `{"framework":"lexile","readerAbility":850,"textMeasures":[600,850,1100]}`
)

// scoringLoad: 245 JSON calls on four /api routes (15 of them without a token: 401), five failed
// logins (401), five at an unknown path (404), and 40 gRPC calls (30 ScoreScale, 10 IssueToken).
func scoringLoad(t *testing.T, ctx context.Context, s *live.Service) []call {
	token := devToken(t, ctx, s.Base)
	cc, gctx := grpcConn(t, ctx, s.GRPC)
	scoring := scoringv1.NewScoringServiceClient(cc)
	auth := authv1.NewTokenServiceClient(cc)
	j := func(route, body, tok string, want, n int) call {
		return call{"http", route, n, func(ctx context.Context) error { return postJSON(ctx, s.Base, route, tok, body, want) }}
	}
	return []call{
		j("/api/score/scale/standard", scaleScore, token, 200, 80),
		j("/api/score/items/ids/standard", itemIDs, token, 200, 60),
		j("/api/score/items/idsWithResults/standard", itemResults, token, 200, 60),
		j("/api/score/items/difficulties/bayes", bayes, token, 200, 30),
		j("/api/score/scale/standard", scaleScore, "", 401, 15),
		j("/authToken", badLogin, "", 401, 5),
		j("/no/such/path", "{}", token, 404, 5),
		{"grpc", scoringv1.ScoringService_ScoreScale_FullMethodName, 30, func(context.Context) error {
			_, err := scoring.ScoreScale(gctx, &scoringv1.ScoreScaleRequest{LinkId: proto.String("STATE-READ-2026"),
				ScaleScore: proto.String("540"), ScaleSem: proto.Float64(18)})
			return err
		}},
		{"grpc", authv1.TokenService_IssueToken_FullMethodName, 10, func(ctx context.Context) error {
			_, err := auth.IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: proto.String("demo"), ClientSecret: proto.String("demo-secret")})
			return err
		}},
	}
}

// forecastLoad: 160 JSON calls on three /api routes, ten logins (five failed: 401), and 40 gRPC
// ForecastReading calls.
func forecastLoad(t *testing.T, ctx context.Context, s *live.Service) []call {
	token := devToken(t, ctx, s.Base)
	cc, gctx := grpcConn(t, ctx, s.GRPC)
	forecast := forecastv1.NewForecastServiceClient(cc)
	j := func(route, body, tok string, want, n int) call {
		return call{"http", route, n, func(ctx context.Context) error { return postJSON(ctx, s.Base, route, tok, body, want) }}
	}
	return []call{
		j("/api/forecast/reading", reading, token, 200, 80),
		j("/api/forecast/reading/group", group, token, 200, 40),
		j("/api/forecast/comprehension", comprehend, token, 200, 40),
		j("/authToken", `{"clientId":"demo","clientSecret":"demo-secret"}`, "", 200, 5),
		j("/authToken", badLogin, "", 401, 5),
		{"grpc", forecastv1.ForecastService_ForecastReading_FullMethodName, 40, func(context.Context) error {
			_, err := forecast.ForecastReading(gctx, &forecastv1.ForecastRequest{PriorAbility: proto.Float64(640),
				PriorUncertainty: proto.Float64(70), TestUncertainty: proto.Float64(32.5), ElapsedDays: proto.Float64(180),
				CutLevels: []float64{500, 650, 800}})
			return err
		}},
	}
}

// --- the checks -----------------------------------------------------------------------------

// checkMetrics pipes a live scrape of base/metrics into promtool check metrics, which must
// report nothing.
func checkMetrics(t *testing.T, ctx context.Context, promtool, service, base string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s, %v", base, resp.Status, err)
	}
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("%s: promtool check metrics on a live scrape (%d bytes): %v\n%s", service, len(body), err, out)
	}
}

// target is one query of the dashboard.
type target struct {
	panel, refID, expr string
}

// dashboardTargets lists every query of dashboard.json, rows' panels included.
func dashboardTargets(t *testing.T) []target {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(component, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string  `json:"title"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	}
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []target
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				out = append(out, target{p.Title, tg.RefID, tg.Expr})
			}
		}
	}
	walk(dash.Panels)
	if len(out) == 0 {
		t.Fatal("dashboard.json has no queries")
	}
	return out
}

// dashboardQueries runs every dashboard query for each service (the row's $service), as Grafana
// would with $__rate_interval spanning the load, and wants data from each; then wants the request
// rate and the p99 latency panels to hold every route of the load, with a rate above 0 and a
// finite quantile.
func dashboardQueries(t *testing.T, ctx context.Context, p *prometheus, calls map[string][]call) {
	var values []string
	if err := p.get(ctx, "/api/v1/label/service/values", url.Values{"match[]": {"yardstick_requests_total"}}, &values); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(values, "scoring") || !slices.Contains(values, "forecast") {
		t.Errorf("the dashboard's service variable (label_values(yardstick_requests_total, service)) finds %v; want scoring and forecast", values)
	}
	results := map[string][]sample{} // by service and panel title + refId
	var empty []string
	targets := dashboardTargets(t)
	for _, service := range []string{"scoring", "forecast"} {
		for _, tg := range targets {
			expr := strings.NewReplacer("$service", service, "$__rate_interval", window).Replace(tg.expr)
			got, err := p.query(ctx, expr)
			switch {
			case err != nil:
				t.Errorf("%s: panel %q, query %s: %v\n  %s", service, tg.panel, tg.refID, err, expr)
			case len(got) == 0:
				empty = append(empty, fmt.Sprintf("%s: panel %q, query %s: no data\n  %s", service, tg.panel, tg.refID, expr))
			}
			results[service+"|"+tg.panel+"|"+tg.refID] = got
		}
	}
	sort.Strings(empty)
	for _, e := range empty {
		t.Error(e)
	}
	t.Logf("%d dashboard queries, run for each of the 2 services: %d of the %d runs without data", len(targets), len(empty), 2*len(targets))

	for service, cs := range calls {
		rates := results[service+"|Requests per second by route and front|A"]
		p99 := results[service+"|Latency p99 by route and front|A"]
		for _, c := range cs {
			if r, ok := find(rates, c.front, c.route); !ok || !(r > 0) {
				t.Errorf("%s: request rate of %s %s: %v (found: %v); want above 0", service, c.front, c.route, r, ok)
			}
			if q, ok := find(p99, c.front, c.route); !ok || math.IsNaN(q) || math.IsInf(q, 0) || q <= 0 {
				t.Errorf("%s: p99 latency of %s %s: %v (found: %v); want a finite quantile", service, c.front, c.route, q, ok)
			}
		}
	}
}

// find is the value of the sample of front and route (route "other" for a path outside the
// contract).
func find(ss []sample, front, route string) (float64, bool) {
	if !strings.HasPrefix(route, "/api/") && !strings.HasPrefix(route, "/yardstick.") && route != "/authToken" {
		route = "other"
	}
	for _, s := range ss {
		if s.Metric["front"] == front && s.Metric["route"] == route {
			return s.float(), true
		}
	}
	return math.NaN(), false
}

// rules wants every rule of the component loaded and evaluated without error against the real
// series, and the SLO recording rules to hold a ratio for each service.
func rules(t *testing.T, ctx context.Context, p *prometheus) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name           string    `json:"name"`
				Health         string    `json:"health"`
				LastError      string    `json:"lastError"`
				LastEvaluation time.Time `json:"lastEvaluation"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" || r.LastEvaluation.IsZero() {
				t.Errorf("group %s, rule %s: health %q, last evaluated %v: %s", g.Name, r.Name, r.Health, r.LastEvaluation, r.LastError)
			}
		}
	}
	if n == 0 {
		t.Fatalf("Prometheus loaded no rules from the component")
	}
	for _, record := range []string{"yardstick:availability_errors:ratio_rate5m", "yardstick:latency_slow:ratio_rate5m"} {
		got, err := p.query(ctx, record)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]float64{}
		for _, s := range got {
			seen[s.Metric["service"]] = s.float()
		}
		for _, service := range []string{"scoring", "forecast"} {
			if v, ok := seen[service]; !ok || math.IsNaN(v) || v < 0 || v > 1 {
				t.Errorf("%s{service=%q}: %v (present: %v); want a ratio", record, service, v, ok)
			}
		}
	}
}
