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
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// budgetServer is a forecast server whose budget takes one group forecast of 900 students at a
// time (1.14 MB of 1.5 MiB).
func budgetServer(t *testing.T) (*harness, *fakeForecast, string) {
	t.Helper()
	cfg := forecastConfig(t)
	cfg.MemoryBudget = 3 << 19
	limitsOf(cfg).MaxStudents = 1000
	fake := newFakeForecast(t, limitsOf(cfg))
	fake.faulty = true
	h := startService(t, cfg, fake.service())
	return h, fake, h.token("demo", "demo-secret")
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
func waitIdle(t *testing.T, b *admission.Budget) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.Admitted() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("budget in use: got %d; want 0 (not released)", b.Admitted())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBudgetRefusesBeyondItWithRetryAfter(t *testing.T) {
	t.Parallel()
	h, fake, tok := budgetServer(t)
	group := groupBody(900, typicalStudent)

	held := make(chan response, 1)
	go func() {
		r, err := post(h.base, "/api/forecast/math/group", tok, bytes.NewReader(group))
		if err != nil {
			t.Error(err)
		}
		held <- r
	}()
	<-fake.started
	// Admitted before the read by its size, as if every 8 bytes were a student; once read, by the
	// students its brackets can hold.
	before := h.srv.Cost(forecastv1.ForecastService_ForecastMathGroup_FullMethodName, int64(len(group)), true)
	if got, want := h.srv.budget.Admitted(), h.srv.budget.GroupCostOfBody(group); got != want || want >= before {
		t.Fatalf("budget in use while one group runs: got %d; want %d, under the %d admitted before the read", got, want, before)
	}

	wantBody := map[string]any{"message": "Service busy.", "exceptionType": "APIException",
		"additionalInfo": "Too much large work is in progress; retry after 1 seconds."}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path, body := "/api/forecast/reading/group", group
			if i%2 == 1 { // a single forecast of 64 KiB is large too
				path, body = "/api/forecast/reading", paddedForecast(admission.SmallRequestBytes)
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

	// Below 64 KiB a single forecast skips the budget.
	if r, err := post(h.base, "/api/forecast/reading", tok, bytes.NewReader(paddedForecast(admission.SmallRequestBytes-1))); err != nil || r.status != http.StatusOK {
		t.Errorf("small request with the budget full: got %d %s %v; want 200", r.status, r.body, err)
	}

	// gRPC: ResourceExhausted with RetryInfo and the OVERLOADED reason.
	req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(30), CutLevels: []float64{400}}
	for range 900 {
		req.StudentData = append(req.StudentData, &forecastv1.StudentData{PriorAbility: proto.Float64(500), PriorUncertainty: proto.Float64(50), ElapsedDays: proto.Float64(30)})
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	_, err := forecastv1.NewForecastServiceClient(h.grpc).ForecastReadingGroup(ctx, req)
	if code, retry, reason := overloadOf(err); code != codes.ResourceExhausted || retry != time.Second || reason != "OVERLOADED" {
		t.Errorf("gRPC beyond the budget: got %s retry %s reason %q; want ResourceExhausted 1s OVERLOADED", code, retry, reason)
	}
	wantRefusals(t, h, "grpc", 1)
	// Shed load is a warning in the log, on both fronts.
	for _, want := range []string{`"status":503`, `"code":"ResourceExhausted"`} {
		checkLoggedAsWarning(t, h.logs.String(), want)
	}
	// A single forecast message of 64 KiB is large; one byte less costs the budget nothing.
	for _, tc := range []struct {
		size int
		want codes.Code
	}{{admission.SmallRequestBytes, codes.ResourceExhausted}, {admission.SmallRequestBytes - 1, codes.OK}} {
		_, err := forecastv1.NewForecastServiceClient(h.grpc).ForecastReading(ctx, forecastOfSize(t, tc.size))
		if got := status.Code(err); got != tc.want {
			t.Errorf("gRPC single forecast of %d bytes with the budget full: got %v; want %v", tc.size, err, tc.want)
		}
	}

	fake.release <- struct{}{}
	if r := <-held; r.status != http.StatusOK {
		t.Errorf("the admitted group: got %d %s; want 200", r.status, r.body)
	}
	waitIdle(t, h.srv.budget)
	if r, err := post(h.base, "/api/forecast/reading/group", tok, bytes.NewReader(group)); err != nil || r.status != http.StatusOK {
		t.Errorf("after the budget was released: got %d %s %v; want 200", r.status, r.body, err)
	}
	if _, err := forecastv1.NewForecastServiceClient(h.grpc).ForecastReadingGroup(ctx, req); err != nil {
		t.Errorf("gRPC after the budget was released: got %v; want OK", err)
	}
	waitIdle(t, h.srv.budget)
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

// forecastOfSize is a single forecast request of exactly n protobuf bytes: cut levels, and as
// many of the four optional numbers (9 bytes each) as make the length come out.
func forecastOfSize(t *testing.T, n int) *forecastv1.ForecastRequest {
	t.Helper()
	for k := range 5 {
		for levels := (n - 9*k - 4) / 8; levels > 0 && levels*8+9*k+1 >= n-4; levels-- {
			req := &forecastv1.ForecastRequest{CutLevels: make([]float64, levels)}
			for i, f := range []**float64{&req.PriorAbility, &req.PriorUncertainty, &req.TestUncertainty, &req.ElapsedDays}[:k] {
				*f = proto.Float64(float64(100 + i))
			}
			if proto.Size(req) == n {
				return req
			}
		}
	}
	t.Fatalf("no forecast request of %d bytes", n)
	return nil
}

// paddedForecast is a valid single forecast request of exactly n bytes (white space pads it).
func paddedForecast(n int) []byte {
	b := []byte(`{"priorAbility":500,"priorUncertainty":50,"elapsedDays":30,"testUncertainty":30,"cutLevels":[400]}`)
	return append(b[:len(b)-1], append(bytes.Repeat([]byte(" "), n-len(b)), '}')...)
}

func TestBudgetReleasedAfterErrors(t *testing.T) {
	t.Parallel()
	h, fake, tok := budgetServer(t)
	heldGroup := func(testUncertainty int) []byte {
		return []byte(strings.Replace(string(groupBody(900, typicalStudent)), `"testUncertainty":30`, fmt.Sprintf(`"testUncertainty":%d`, testUncertainty), 1))
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   io.Reader
		held   bool // the handler waits for release
		status int
	}{
		{"validation error of the handler", "/api/forecast/math/group", bytes.NewReader(heldGroup(1)), true, http.StatusBadRequest},
		{"fault of the handler", "/api/forecast/math/group", bytes.NewReader(heldGroup(2)), true, http.StatusInternalServerError},
		{"panic of the handler", "/api/forecast/math/group", bytes.NewReader(heldGroup(3)), true, http.StatusInternalServerError},
		{"body that does not decode", "/api/forecast/reading/group", strings.NewReader(`{"studentData":[` + strings.Repeat(`{"priorAbility":"x"},`, 3000) + `{}]}`), false, http.StatusBadRequest},
		{"invalid students", "/api/forecast/reading/group", bytes.NewReader(groupBody(900, func(int) string { return `{}` })), false, http.StatusBadRequest},
		{"without Content-Length", "/api/forecast/math/group", io.MultiReader(bytes.NewReader(heldGroup(30))), true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan response, 1)
			go func() {
				r, err := post(h.base, tc.path, tok, tc.body)
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			if tc.held {
				<-fake.started
				if h.srv.budget.Admitted() == 0 || h.srv.budget.Admitted() >= h.srv.budget.Capacity() {
					t.Errorf("in use while the handler runs: got %d; want the request's cost, under the capacity %d", h.srv.budget.Admitted(), h.srv.budget.Capacity())
				}
				fake.release <- struct{}{}
			}
			if r := <-done; r.status != tc.status {
				t.Errorf("status: got %d %s; want %d", r.status, r.body, tc.status)
			}
			waitIdle(t, h.srv.budget)
		})
	}

	t.Run("caller hangs up mid-body", func(t *testing.T) {
		c, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /api/forecast/reading/group HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"studentData\":[", tok)
		// Its declared bytes are held in the body pool while they arrive, none of the budget.
		waitFor(t, "the body's bytes held while it arrives", func() bool { return h.srv.budget.BodiesHeldBy("demo") == 100000 })
		if got := h.srv.budget.Admitted(); got != 0 {
			t.Errorf("budget held by a body still arriving: got %d; want 0", got)
		}
		c.Close()
		waitFor(t, "the body's bytes given back", func() bool { return h.srv.budget.BodiesHeldBy("demo") == 0 })
		waitIdle(t, h.srv.budget)
	})
}

// wantRefusals checks yardstick_admission_refusals_total{front, cause="memory_budget"}.
func wantRefusals(t *testing.T, h *harness, front string, want float64) {
	t.Helper()
	if _, v := sample(t, scrape(t, h), "yardstick_admission_refusals_total", `cause="memory_budget".*front="`+front+`"`); v != want {
		t.Errorf("admission refusals of %s for memory: got %v; want %v", front, v, want)
	}
}
