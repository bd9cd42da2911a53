package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
)

// budgetServer is a server of the test service, its Group served, whose budget takes one group
// call of 900 items at a time (1.16 MB of 1.5 MiB); a Group call of text "slow" or "slow:…"
// holds it until the test releases it (h.echo.release).
func budgetServer(t *testing.T) (*harness, string) {
	t.Helper()
	cfg := testConfig(t)
	cfg.MemoryBudget = 3 << 19
	limitsOf(cfg).MaxStudents = 1000
	h := startTestGroup(t, cfg)
	return h, h.token("demo", "demo-secret")
}

// post sends body to path with the token; safe from any goroutine.
func post(base, path, tok string, body io.Reader) (response, error) {
	req, err := http.NewRequest(http.MethodPost, base+path, body)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}, err
}

// waitIdle waits until the budget has nothing admitted.
func waitIdle(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for admitted(t, h) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("budget in use: got %d; want 0 (not released)", admitted(t, h))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// admitted is what the budget has admitted: yardstick_memory_budget_in_use_bytes.
func admitted(t *testing.T, h *harness) int64 {
	return gauge(t, h, "yardstick_memory_budget_in_use_bytes", "")
}

// bodiesHeld is what the JSON bodies being read hold of the body pool, every client's together:
// yardstick_read_pool_in_use_bytes{front="http"}.
func bodiesHeld(t *testing.T, h *harness) int64 {
	return gauge(t, h, "yardstick_read_pool_in_use_bytes", "http")
}

// gauge is the value of the gauge name{front} of h's server (its one series when front is ""),
// read from its registry as /metrics serves it.
func gauge(t *testing.T, h *harness, name, front string) int64 {
	t.Helper()
	families, err := h.srv.telemetry.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if front == "" || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == "front" && l.GetValue() == front }) {
				return int64(m.GetGauge().GetValue())
			}
		}
	}
	t.Fatalf("no series %s{front=%q}", name, front)
	return 0
}

func TestBudgetRefusesBeyondItWithRetryAfter(t *testing.T) {
	t.Parallel()
	h, tok := budgetServer(t)
	slow, group := echoGroupBody("slow", 900), echoGroupBody("x", 900)

	held := make(chan response, 1)
	go func() {
		r, err := post(h.base, throwawayGroupPath, tok, bytes.NewReader(slow))
		if err != nil {
			t.Error(err)
		}
		held <- r
	}()
	<-h.echo.started
	// Admitted before the read by its size, as if every 8 bytes were an item; once read, by the
	// items its brackets can hold.
	before := h.srv.Cost(throwawayGroup, int64(len(slow)), true)
	if got, want := admitted(t, h), h.srv.gate.Budget.CostOfBody(h.srv.routes.ByMethod[throwawayGroup].Group, slow); got != want || want >= before {
		t.Fatalf("budget in use while one group runs: got %d; want %d, under the %d admitted before the read", got, want, before)
	}

	wantBody := map[string]any{"message": "Service busy.", "exceptionType": "APIException",
		"additionalInfo": "Too much large work is in progress; retry after 1 seconds."}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path, body := throwawayGroupPath, group
			if i%2 == 1 { // a call of another route is large too from 64 KiB
				path, body = throwawayPath, paddedEcho(t, admission.SmallRequestBytes)
			}
			r, err := post(h.base, path, tok, bytes.NewReader(body))
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
				t.Errorf("%s beyond the budget: got %d Retry-After %q; want 503 Retry-After 1", path, r.status, r.header.Get("Retry-After"))
			}
			var got map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil || !reflect.DeepEqual(got, wantBody) {
				t.Errorf("%s body: got %s; want %v", path, r.body, wantBody)
			}
		})
	}
	wg.Wait()
	wantRefusals(t, h, "http", 8)

	// Below 64 KiB a call of another route skips the budget.
	if r, err := post(h.base, throwawayPath, tok, bytes.NewReader(paddedEcho(t, admission.SmallRequestBytes-1))); err != nil || r.status != http.StatusOK {
		t.Errorf("small request with the budget full: got %d %s %v; want 200", r.status, r.body, err)
	}

	// gRPC: ResourceExhausted with RetryInfo and the OVERLOADED reason.
	req := echoGroupRequest("x", 900)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	groupCall := func() error { return h.grpc.Invoke(ctx, throwawayGroup, req, dynamicpb.NewMessage(echoOut)) }
	err := groupCall()
	if code, retry, reason := overloadOf(err); code != codes.ResourceExhausted || retry != time.Second || reason != "OVERLOADED" {
		t.Errorf("gRPC beyond the budget: got %s retry %s reason %q; want ResourceExhausted 1s OVERLOADED", code, retry, reason)
	}
	wantRefusals(t, h, "grpc", 1)
	// Shed load is a warning in the log, on both fronts.
	for _, want := range []string{`"status":503`, `"code":"ResourceExhausted"`} {
		checkLoggedAsWarning(t, h.logs.String(), want)
	}
	// A message of another rpc of 64 KiB is large; one byte less costs the budget nothing.
	for _, tc := range []struct {
		size int
		want codes.Code
	}{{admission.SmallRequestBytes, codes.ResourceExhausted}, {admission.SmallRequestBytes - 1, codes.OK}} {
		err := h.echoCall(ctx, echoOfSize(t, tc.size))
		if got := status.Code(err); got != tc.want {
			t.Errorf("gRPC Echo of %d bytes with the budget full: got %v; want %v", tc.size, err, tc.want)
		}
	}

	h.echo.release <- struct{}{}
	if r := <-held; r.status != http.StatusOK {
		t.Errorf("the admitted group: got %d %s; want 200", r.status, r.body)
	}
	waitIdle(t, h)
	if r, err := post(h.base, throwawayGroupPath, tok, bytes.NewReader(group)); err != nil || r.status != http.StatusOK {
		t.Errorf("after the budget was released: got %d %s %v; want 200", r.status, r.body, err)
	}
	if err := groupCall(); err != nil {
		t.Errorf("gRPC after the budget was released: got %v; want OK", err)
	}
	waitIdle(t, h)
}

// overloadOf is a gRPC refusal's code, and its RetryInfo's delay and ErrorInfo's reason.
func overloadOf(err error) (code codes.Code, retry time.Duration, reason string) {
	st := status.Convert(err)
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			retry = d.GetRetryDelay().AsDuration()
		case *errdetails.ErrorInfo:
			reason = d.GetReason()
		}
	}
	return st.Code(), retry, reason
}

// checkLoggedAsWarning holds every log line with want to level WARN, and wants one at least.
func checkLoggedAsWarning(t *testing.T, logs, want string) {
	t.Helper()
	found := false
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, want) {
			found = true
			if !strings.Contains(line, `"level":"WARN"`) {
				t.Errorf("log line of a refusal for want of budget: got %s; want level WARN", line)
			}
		}
	}
	if !found {
		t.Errorf("no log line with %s", want)
	}
}

// paddedEcho is a valid EchoRequest of exactly n JSON bytes: text "x" and one item whose id pads
// it, so that Echo answers it with a small response.
func paddedEcho(t testing.TB, n int) []byte {
	t.Helper()
	b := []byte(`{"text":"x","items":[{"id":"","result":1}]}`)
	if n < len(b) {
		t.Fatalf("no EchoRequest of %d bytes", n)
	}
	i := bytes.Index(b, []byte(`"",`)) + 1
	return slices.Concat(b[:i], bytes.Repeat([]byte("x"), n-len(b)), b[i:])
}

// echoGroupRequest is the EchoRequest of echoGroupBody(text, n), for the gRPC front.
func echoGroupRequest(text string, n int) *dynamicpb.Message {
	items := make([]any, 0, 2*n)
	for i := range n {
		items = append(items, fmt.Sprintf("L%06d", i), i%2)
	}
	return echoRequest(text, items...)
}

func TestBudgetReleasedAfterErrors(t *testing.T) {
	t.Parallel()
	h, tok := budgetServer(t)
	// Each a Group call of 900 items: held ones wait for release, then end as their text asks.
	for _, tc := range []struct {
		name   string
		body   io.Reader
		held   bool // the handler waits for release
		status int
	}{
		{"validation error of the handler", bytes.NewReader(echoGroupBody("slow:invalid", 900)), true, http.StatusBadRequest},
		{"fault of the handler", bytes.NewReader(echoGroupBody("slow:fault", 900)), true, http.StatusInternalServerError},
		{"panic of the handler", bytes.NewReader(echoGroupBody("slow:panic", 900)), true, http.StatusInternalServerError},
		{"body that does not decode", strings.NewReader(`{"text":"x","items":[` + strings.Repeat(`{"result":"x"},`, 3000) + `{}]}`), false, http.StatusBadRequest},
		{"invalid items", bytes.NewReader(echoGroupBody("invalid", 900)), false, http.StatusBadRequest},
		{"without Content-Length", io.MultiReader(bytes.NewReader(echoGroupBody("slow", 900))), true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan response, 1)
			go func() {
				r, err := post(h.base, throwawayGroupPath, tok, tc.body)
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			if tc.held {
				<-h.echo.started
				if got, capacity := admitted(t, h), gauge(t, h, "yardstick_memory_budget_bytes", ""); got == 0 || got >= capacity {
					t.Errorf("in use while the handler runs: got %d; want the request's cost, under the capacity %d", got, capacity)
				}
				h.echo.release <- struct{}{}
			}
			if r := <-done; r.status != tc.status {
				t.Errorf("status: got %d %s; want %d", r.status, r.body, tc.status)
			}
			waitIdle(t, h)
		})
	}

	t.Run("caller hangs up mid-body", func(t *testing.T) {
		c, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST "+throwawayGroupPath+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"text\":\"x\",\"items\":[", tok)
		// Its declared bytes are held in the body pool while they arrive, none of the budget.
		waitFor(t, "the body's bytes held while it arrives", func() bool { return bodiesHeld(t, h) == 100000 })
		if got := admitted(t, h); got != 0 {
			t.Errorf("budget held by a body still arriving: got %d; want 0", got)
		}
		c.Close()
		waitFor(t, "the body's bytes given back", func() bool { return bodiesHeld(t, h) == 0 })
		waitIdle(t, h)
	})
}

// wantRefusals checks yardstick_admission_refusals_total{front, cause="memory_budget"}.
func wantRefusals(t *testing.T, h *harness, front string, want float64) {
	t.Helper()
	if _, v := sample(t, scrape(t, h), "yardstick_admission_refusals_total", `cause="memory_budget".*front="`+front+`"`); v != want {
		t.Errorf("admission refusals of %s for memory: got %v; want %v", front, v, want)
	}
}
