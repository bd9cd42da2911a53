package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// startTestBatch runs the test service, with its batch path, and clients: batcher
// (throwaway:echo and throwaway:batch) and echo-only (no throwaway:batch).
func startTestBatch(t *testing.T, edit func(*Config)) *harness {
	t.Helper()
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n" +
		"  - clientId: batcher\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"" + throwawayPerm + "\", \"" + throwawayBatchPerm + "\"]\n" +
		"  - clientId: echo-only\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"" + throwawayPerm + "\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.ClientsFile = clients
	if edit != nil {
		edit(&cfg)
	}
	return startTest(t, cfg)
}

const ndjson = "application/x-ndjson"

// TestBatchRefusals: what is answered for the whole stream, before its head, as the unary
// front answers it.
func TestBatchRefusals(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	batcher := "Bearer " + h.token("batcher", clientSecret)
	standard := "Bearer " + h.token("echo-only", clientSecret)
	record := `{"id":"a","path":"` + throwawayPath + `","body":{"text":"x"}}` + "\n"
	for _, tc := range []struct {
		name, ctype, auth string
		status            int
		wantIn            string
	}{
		{"no token", ndjson, "", 401, "Missing bearer token"},
		{"bad token", ndjson, "Bearer nope", 401, "The token could not be read"},
		{"no batch permission", ndjson, standard, 403, `\"` + throwawayBatchPerm + `\"`},
		{"json", "application/json", batcher, 415, `"additionalInfo":"Send Content-Type: application/x-ndjson."`},
		{"no type", "", batcher, 415, `"additionalInfo":"Send Content-Type: application/x-ndjson."`},
		{"ndjson with parameters", ndjson + "; charset=utf-8", batcher, 200, `"summary"`},
		{"admitted", ndjson, batcher, 200, `{"summary":{"records":1,"ok":1,"failed":0}}`},
		{"GET", "", batcher, 405, `"Method not allowed."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.auth != "" {
				hdr = []string{"Authorization", tc.auth}
			}
			method := http.MethodPost
			if tc.name == "GET" {
				method = http.MethodGet
			}
			r := h.do(method, throwawayBatchPath, tc.ctype, record, hdr...)
			if tc.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("405 with Allow %q", r.header.Get("Allow"))
			}
			if r.status != tc.status || !strings.Contains(string(r.body), tc.wantIn) {
				t.Errorf("got %d %s; want %d with %s", r.status, r.body, tc.status, tc.wantIn)
			}
		})
	}
}

// TestBatchRecords: a record's own path's permission with the stream's token (403 in its
// line, the unary 403 body), paths that are not unary paths of the service (404), and the one
// log line of the stream with its counts.
func TestBatchRecords(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	auth := "Bearer " + h.token("batcher", clientSecret)
	shout := `{"text":"x","items":[{"id":"x","result":1}]}`
	unary403 := h.post(throwawayShoutPath, shout, "Authorization", auth)
	unaryOK := h.post(throwawayPath, `{"text":"x"}`, "Authorization", auth)
	unaryInvalid := h.post(throwawayPath, `{"text":"invalid"}`, "Authorization", auth)
	notFound := h.post("/api/nothing/of/the/kind/anywhere", `{}`, "Authorization", auth)
	// The other service's path: the unary 404 says whose it is, and so does its record.
	elsewhere := h.post("/api/forecast/reading", `{}`, "Authorization", auth)
	if !strings.Contains(string(elsewhere.body), "served by the forecast service") {
		t.Errorf("unary 404 of the other service's path: got %s; want it named", elsewhere.body)
	}
	if unary403.status != 403 || unaryOK.status != 200 || unaryInvalid.status != 400 || notFound.status != 404 {
		t.Fatalf("unary: %d %d %d %d", unary403.status, unaryOK.status, unaryInvalid.status, notFound.status)
	}
	before := strings.Count(h.logs.String(), `"msg":"http request"`)
	body := `{"id":"ok","path":"` + throwawayPath + `","body":{"text":"x"}}
{"id":"shout","path":"` + throwawayShoutPath + `","body":` + shout + `}
{"id":"invalid","path":"` + throwawayPath + `","body":{"text":"invalid"}}
{"id":"self","path":"` + throwawayBatchPath + `","body":{}}
{"id":"login","path":"/authToken","body":{"clientId":"batcher","clientSecret":"` + clientSecret + `"}}
{"id":"other","path":"/api/forecast/reading","body":{}}
{"id":"health","path":"/healthz","body":{}}

not json
`
	r := h.do(http.MethodPost, throwawayBatchPath, ndjson, body, "Authorization", auth)
	if r.status != 200 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	trim := func(b []byte) string { return strings.TrimRight(string(b), "\n") }
	want := []string{
		`{"id":"ok","status":200,"body":` + trim(unaryOK.body) + `}`,
		`{"id":"shout","status":403,"body":` + trim(unary403.body) + `}`,
		`{"id":"invalid","status":400,"body":` + trim(unaryInvalid.body) + `}`,
		`{"id":"self","status":404,"body":` + trim(notFound.body) + `}`,
		`{"id":"login","status":404,"body":` + trim(notFound.body) + `}`,
		`{"id":"other","status":404,"body":` + trim(elsewhere.body) + `}`,
		`{"id":"health","status":404,"body":` + trim(notFound.body) + `}`,
	}
	lines := strings.Split(strings.TrimRight(string(r.body), "\n"), "\n")
	if len(lines) != len(want)+2 {
		t.Fatalf("%d lines:\n%s", len(lines), r.body)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], w)
		}
	}
	if !strings.HasPrefix(lines[7], `{"line":9,"status":400,`) || lines[8] != `{"summary":{"records":8,"ok":1,"failed":7}}` {
		t.Errorf("last lines:\n%s\n%s", lines[7], lines[8])
	}
	// One request line for the stream, with its counts, and none for its records.
	var streamLines []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs := h.logs.String()
		streamLines = nil
		for line := range strings.Lines(logs) {
			if strings.Contains(line, `"route":"`+throwawayBatchPath+`"`) {
				streamLines = append(streamLines, line)
			}
		}
		if len(streamLines) > 0 || time.Now().After(deadline) {
			if got := strings.Count(logs, `"msg":"http request"`) - before; got != 1 {
				t.Errorf("%d request lines for one stream:\n%s", got, logs)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(streamLines) != 1 || !strings.Contains(streamLines[0], `"records":8`) || !strings.Contains(streamLines[0], `"ok":1`) ||
		!strings.Contains(streamLines[0], `"failed":7`) || !strings.Contains(streamLines[0], `"complete":true`) ||
		!strings.Contains(streamLines[0], `"client_id":"batcher"`) {
		t.Errorf("stream's log line: %q", streamLines)
	}
}

// TestBatchNotAdmitted: a stream the budget cannot take is answered 503 with Retry-After before
// its head; one admitted streams its answers while its body is still open.
func TestBatchNotAdmitted(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, func(c *Config) { c.MemoryBudget = 2 * admission.StreamReserve }) // room for one stream
	auth := "Bearer " + h.token("batcher", clientSecret)
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, h.base+throwawayBatchPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjson)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req) // the head comes before any record is sent
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("first stream: %d", resp.StatusCode)
	}
	// The answer to a record comes while the body is still open.
	go func() {
		_, _ = io.WriteString(pw, `{"id":"a","path":"`+throwawayPath+`","body":{"text":"x"}}`+"\n")
	}()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, `{"id":"a","status":200,`) {
		t.Fatalf("first answer: %q %v", line, err)
	}
	// Another client's stream finds the streams' half full (503); the same client's, its own
	// share full (429); both with Retry-After.
	for _, tc := range []struct {
		auth   string
		status int
	}{{"Bearer " + h.token("demo", "demo-secret"), 503}, {auth, 429}} {
		r := h.do(http.MethodPost, throwawayBatchPath, ndjson, "\n", "Authorization", tc.auth)
		if r.status != tc.status || r.header.Get("Retry-After") != "1" {
			t.Errorf("second stream: got %d Retry-After %q %s; want %d, Retry-After 1", r.status, r.header.Get("Retry-After"), r.body, tc.status)
		}
	}
	// Unary calls are not refused for it.
	if u := h.post(throwawayPath, `{"text":"x"}`, "Authorization", auth); u.status != 200 {
		t.Errorf("unary call beside a stream: %d %s", u.status, u.body)
	}
}

// TestBatchNotPaced: a stream is bound neither by the body limit nor by the minimum body rate:
// a body larger than the unary limit, sent slower than the rate, is answered whole.
func TestBatchNotPaced(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, func(c *Config) {
		c.BodyGrace, c.MinBodyRate = 50*time.Millisecond, 1<<20
		c.MaxBodyBytes = 64 << 10
	})
	auth := "Bearer " + h.token("batcher", clientSecret)
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		line := `{"id":"a","path":"` + throwawayPath + `","body":{"text":"x","items":[{"id":"x","result":1}]}}` + "\n"
		chunk := strings.Repeat(line, 400) // 400 records, 38 KiB
		for range 3 {                      // 120 KiB in all, over 300 ms
			if _, err := io.WriteString(pw, chunk); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	req, err := http.NewRequest(http.MethodPost, h.base+throwawayBatchPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjson)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !strings.HasSuffix(string(all), `{"summary":{"records":1200,"ok":1200,"failed":0}}`+"\n") {
		t.Fatalf("%d %v: %.300s", resp.StatusCode, err, all[max(0, len(all)-300):])
	}
}

// TestBatchRecordWaitsForBudget: once the head is sent, a record the budget cannot take now
// waits for it (never a 503), and is answered when the budget frees.
func TestBatchRecordWaitsForBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MemoryBudget = 4 << 20 // a stream (2 MiB, half of it) and one group call of 900 items
	limitsOf(cfg).MaxStudents = 1000
	h := startTestGroup(t, cfg)
	tok := h.token("demo", "demo-secret")
	// The record: an Echo of 64 KiB, which costs 30 times its size (1.97 MB): more than the
	// budget has left beside the stream and the group, less than the stream leaves.
	record := paddedEcho(t, admission.SmallRequestBytes)
	group := echoGroupBody("slow", 900)
	if g, r := h.srv.gate.Budget.CostOfBody(h.srv.routes.ByMethod[throwawayGroup].Group, group), h.srv.Cost(throwawayMethod, int64(len(record)), true); g+r <= cfg.MemoryBudget-admission.StreamReserve || r > cfg.MemoryBudget-admission.StreamReserve {
		t.Fatalf("the group costs %d, the record %d; want the record to fit in the budget of %d beside a stream alone, not beside the group too", g, r, cfg.MemoryBudget)
	}

	held := make(chan response, 1)
	go func() {
		r, err := post(h.base, throwawayGroupPath, tok, bytes.NewReader(group))
		if err != nil {
			t.Error(err)
		}
		held <- r
	}()
	<-h.echo.started // the budget now holds that group

	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, h.base+throwawayBatchPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjson)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	answers := make(chan string, 2)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(answers)
				return
			}
			answers <- line
		}
	}()
	if _, err := fmt.Fprintf(pw, `{"id":"g","path":"%s","body":%s}`+"\n", throwawayPath, record); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answers:
		t.Fatalf("answered while the budget was full: %.200s", a)
	case <-time.After(300 * time.Millisecond):
	}
	h.echo.release <- struct{}{}
	select {
	case a := <-answers:
		if want := `{"id":"g","status":200,"body":{"text":"X","client":"demo"}}` + "\n"; a != want {
			t.Errorf("record after the budget freed: got %.200s; want %s", a, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the record was not answered once the budget freed")
	}
	pw.Close()
	if a := <-answers; a != `{"summary":{"records":1,"ok":1,"failed":0}}`+"\n" {
		t.Errorf("summary: %q", a)
	}
	if r := <-held; r.status != http.StatusOK {
		t.Errorf("the held group: got %d %s; want 200", r.status, r.body)
	}
}
