package rpcerr

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestToHTTP: the one mapping from a status to the documented HTTP status, exceptionType,
// message and Retry-After, for each kind of answer.
func TestToHTTP(t *testing.T) {
	t.Parallel()
	var p Problems
	p.Add("items[3].result", "must be 0 or 1, got %d", 7)
	p.Add("", "numberCorrect is more than the items")
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		exception  string
		message    string
		retryAfter int64
	}{
		{"validation", p.Err(), 400, ExceptionValidation, "Invalid input.", 0},
		{"not authenticated", NotAuthenticated("Bad token.", "expired"), 401, ExceptionNotAuthenticated, "Bad token.", 0},
		{"permission denied", PermissionDenied("No.", "score:bayes"), 403, ExceptionPermissionDenied, "No.", 0},
		{"not found", status.Error(codes.NotFound, "x"), 404, ExceptionNotFound, "x", 0},
		{"throttled, 1.2 s rounds up", Throttled(1200 * time.Millisecond), 429, ExceptionThrottled, "Too many failed attempts.", 2},
		{"overloaded", Overloaded(time.Second), 503, ExceptionAPI, "Service busy.", 1},
		{"gRPC's own size refusal", status.Error(codes.ResourceExhausted, "grpc: received message larger than max"), 413, ExceptionTooLarge, "Request too large.", 0},
		{"shutting down", status.Error(codes.Unavailable, "x"), 503, ExceptionAPI, "Service unavailable.", 0},
		{"internal", Internal(), 500, ExceptionAPI, "Internal error.", 0},
		{"not a status", errors.New("boom"), 500, ExceptionAPI, "Internal error.", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ToHTTP(tc.err)
			if got.Status != tc.status || got.Body.ExceptionType != tc.exception || got.Body.Message != tc.message || got.RetryAfter != tc.retryAfter {
				t.Errorf("got %d %s %q retry %d; want %d %s %q retry %d", got.Status, got.Body.ExceptionType, got.Body.Message, got.RetryAfter,
					tc.status, tc.exception, tc.message, tc.retryAfter)
			}
		})
	}
	got := ToHTTP(p.Err()).Body.ValidationErrors
	if len(got) != 2 || got["items"][0] != "items[3].result: must be 0 or 1, got 7" || got[NonFieldErrors][0] != "numberCorrect is more than the items" {
		t.Errorf("validationErrors: got %v; want items and nonFieldErrors, keyed by the top-level field", got)
	}
}

// TestProblemsLimit: at most 100 problems are listed; the rest are counted in one more line.
func TestProblemsLimit(t *testing.T) {
	t.Parallel()
	var p Problems
	for i := range 4999 {
		p.Add(fmt.Sprintf("f%d", i), "bad")
	}
	p.Dropped(1)
	body := ToHTTP(p.Err()).Body
	n := 0
	for _, v := range body.ValidationErrors {
		n += len(v)
	}
	if n != 101 || !strings.Contains(fmt.Sprint(body.ValidationErrors[NonFieldErrors]), "4900 more problems not listed") {
		t.Errorf("got %d lines, nonFieldErrors %v; want 100 problems and \"4900 more problems not listed\"", n, body.ValidationErrors[NonFieldErrors])
	}
}

// TestWrite: the body is JSON with nosniff; a 401 names the Bearer scheme, a 405 what is allowed,
// a refusal with a delay its Retry-After.
func TestWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err          error
		header, want string
	}{
		{NotAuthenticated("m", "i"), "WWW-Authenticate", `Bearer realm="yardstick"`},
		{Throttled(3 * time.Second), "Retry-After", "3"},
		{Internal(), "X-Content-Type-Options", "nosniff"},
	} {
		w := httptest.NewRecorder()
		Write(w, ToHTTP(tc.err))
		if got := w.Header().Get(tc.header); got != tc.want {
			t.Errorf("%v: %s: got %q; want %q", tc.err, tc.header, got, tc.want)
		}
		if w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%v: Content-Type %q; want application/json", tc.err, w.Header().Get("Content-Type"))
		}
	}
	w := httptest.NewRecorder()
	WriteStatus(w, http.StatusMethodNotAllowed)
	if w.Code != 405 || w.Header().Get("Allow") != "POST" || !strings.Contains(w.Body.String(), `"exceptionType":"MethodNotAllowed"`) {
		t.Errorf("405: got %d Allow %q %s", w.Code, w.Header().Get("Allow"), w.Body)
	}
}

// TestProblemsClipQuotedInput: Add quotes a string of a %q verb to its first 64 bytes with a note
// (services quote item ids, link ids and the like so), leaves %s text and short strings whole,
// and replaces bytes that are not UTF-8, so that the status always carries its BadRequest.
func TestProblemsClipQuotedInput(t *testing.T) {
	t.Parallel()
	id64, id65 := strings.Repeat("L", 64), strings.Repeat("L", 65)
	long := strings.Repeat("s", 100)
	for _, tc := range []struct {
		name, field, format string
		args                []any
		wantField, want     string
	}{
		{"64 bytes: whole", "items[0].id", "unknown item id %q", []any{id64}, "items[0].id", `unknown item id "` + id64 + `"`},
		{"65 bytes: clipped", "items[0].id", "unknown item id %q", []any{id65}, "items[0].id", `unknown item id "` + id64 + `…" (65 bytes; the first 64 shown)`},
		{"1 MiB, second verb", "items[1].id", "%q repeats items[%d].id", []any{strings.Repeat("L", 1<<20), 0}, "items[1].id", `"` + id64 + `…" (1048576 bytes; the first 64 shown) repeats items[0].id`},
		{"after %% and %d", "x", "100%% of %d: %q", []any{3, id65}, "x", `100% of 3: "` + id64 + `…" (65 bytes; the first 64 shown)`},
		{"%s text is ours: whole", "scaleScore", "%s", []any{long}, "scaleScore", long},
		{"not UTF-8", "a\xffb", "got %s", []any{"c\xfed"}, "a\ufffdb", "got c\ufffdd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p Problems
			p.Add(tc.field, tc.format, tc.args...)
			var bad *errdetails.BadRequest
			for _, d := range status.Convert(p.Err()).Details() {
				if d, ok := d.(*errdetails.BadRequest); ok {
					bad = d
				}
			}
			if bad == nil || len(bad.GetFieldViolations()) != 1 {
				t.Fatalf("got details %v; want one BadRequest violation", status.Convert(p.Err()).Details())
			}
			v := bad.GetFieldViolations()[0]
			if v.GetField() != tc.wantField || v.GetDescription() != tc.want {
				t.Errorf("got %q: %.200q; want %q: %.200q", v.GetField(), v.GetDescription(), tc.wantField, tc.want)
			}
		})
	}
}
