package rpcerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
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
		{"unavailable of ours keeps its words", New(codes.Unavailable, ExceptionAPI, "Service busy.", "Too many logins.", &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)}), 503, ExceptionAPI, "Service busy.", 1},
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
		{"two long: both clipped", "x", "%q then %q", []any{id65, id65}, "x", `"` + id64 + `…" (65 bytes; the first 64 shown) then "` + id64 + `…" (65 bytes; the first 64 shown)`},
		{"%s text is ours: whole", "scaleScore", "%s", []any{long}, "scaleScore", long},
		{"not UTF-8", "a\xffb", "got %s", []any{"c\xfed"}, "a\ufffdb", "got c\ufffdd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p Problems
			args := slices.Clone(tc.args)
			p.Add(tc.field, tc.format, args...)
			if !slices.Equal(args, tc.args) {
				t.Errorf("got the caller's args %.200v after Add; want them as they were", args)
			}
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

// TestInvalidTokenChallenge: a token that was sent and refused answers RFC 6750 §3's
// error="invalid_token" with what to do as the description, on HTTP, and its reason in ErrorInfo
// on gRPC; no token (and bad credentials) keep the plain challenge and NOT_AUTHENTICATED.
func TestInvalidTokenChallenge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		err        error
		reason     string
		challenge  string
		additional string
	}{
		{"expired", InvalidToken(ReasonTokenExpired, "Authentication failed.", "The token has expired."), "TOKEN_EXPIRED",
			`Bearer realm="yardstick", error="invalid_token", error_description="The token has expired."`, "The token has expired."},
		{"other service", InvalidToken(ReasonTokenOtherService, "Authentication failed.", "For the other service."), "TOKEN_OTHER_SERVICE",
			`Bearer realm="yardstick", error="invalid_token", error_description="For the other service."`, "For the other service."},
		{"revoked", InvalidToken(ReasonTokenRevoked, "Authentication failed.", "Revoked."), "TOKEN_REVOKED",
			`Bearer realm="yardstick", error="invalid_token", error_description="Revoked."`, "Revoked."},
		{"unreadable", InvalidToken(ReasonTokenInvalid, "Authentication failed.", "Could not be read."), "TOKEN_INVALID",
			`Bearer realm="yardstick", error="invalid_token", error_description="Could not be read."`, "Could not be read."},
		{"a description outside RFC 6750's characters", InvalidToken(ReasonTokenInvalid, "m", "say \"x\" \\ é\n"), "TOKEN_INVALID",
			`Bearer realm="yardstick", error="invalid_token", error_description="say  x       "`, "say \"x\" \\ é\n"},
		{"no token", NotAuthenticated("Authentication failed.", "Missing bearer token."), "NOT_AUTHENTICATED",
			`Bearer realm="yardstick"`, "Missing bearer token."},
		{"an unknown reason stays plain", New(codes.Unauthenticated, ExceptionNotAuthenticated, "m", "i"), "NOT_AUTHENTICATED",
			`Bearer realm="yardstick"`, "i"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := status.Convert(tc.err)
			if st.Code() != codes.Unauthenticated {
				t.Errorf("got code %v; want Unauthenticated", st.Code())
			}
			info, _, _ := detailsOf(st)
			if info.GetReason() != tc.reason || info.GetMetadata()[ExceptionKey] != ExceptionNotAuthenticated {
				t.Errorf("got ErrorInfo %v; want reason %s, exceptionType NotAuthenticated", info, tc.reason)
			}
			w := httptest.NewRecorder()
			Write(w, ToHTTP(tc.err))
			if got := w.Header().Get("WWW-Authenticate"); w.Code != 401 || got != tc.challenge {
				t.Errorf("got %d with WWW-Authenticate %q; want 401 with %q", w.Code, got, tc.challenge)
			}
			var body ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.ExceptionType != ExceptionNotAuthenticated || body.AdditionalInfo != tc.additional {
				t.Errorf("got body %s (%v); want NotAuthenticated with additionalInfo %q", w.Body, err, tc.additional)
			}
		})
	}
}

// TestMediaAndSize: a 415 names the media type the path takes; a 413 states its limit in bytes
// (and in MiB or KiB only when whole).
func TestMediaAndSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		e      HTTP
		status int
		info   string
	}{
		{"415 JSON", UnsupportedMediaType("application/json"), 415, "Send Content-Type: application/json."},
		{"415 NDJSON", UnsupportedMediaType(MediaNDJSON), 415, "Send Content-Type: application/x-ndjson."},
		{"415 login", UnsupportedMediaType(MediaLogin), 415, "Send Content-Type: application/json, application/x-www-form-urlencoded or multipart/form-data."},
		{"413 1 MiB", TooLarge(1 << 20), 413, "The request body exceeds the size limit of 1048576 bytes (1 MiB)."},
		{"413 16 MiB", TooLarge(16 << 20), 413, "The request body exceeds the size limit of 16777216 bytes (16 MiB)."},
		{"413 64 KiB", TooLarge(64 << 10), 413, "The request body exceeds the size limit of 65536 bytes (64 KiB)."},
		{"413 1 MiB + 1", TooLarge(1<<20 + 1), 413, "The request body exceeds the size limit of 1048577 bytes."},
		{"413 1000 bytes", TooLarge(1000), 413, "The request body exceeds the size limit of 1000 bytes."},
		{"413 a line", LineTooLarge(1 << 20), 413, "The line exceeds the size limit of 1048576 bytes (1 MiB)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			Write(w, tc.e)
			var body ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != tc.status || body.AdditionalInfo != tc.info {
				t.Errorf("got %d %s (%v); want %d with additionalInfo %q", w.Code, w.Body, err, tc.status, tc.info)
			}
			wantType := map[int]string{413: ExceptionTooLarge, 415: ExceptionUnsupportedType}[tc.status]
			if body.ExceptionType != wantType {
				t.Errorf("got exceptionType %q; want %q", body.ExceptionType, wantType)
			}
		})
	}
}

// TestWriteJSON: compact, "<" as written, no final newline, with the front's headers; the same
// bytes as JSON, which the batch engine's answer lines take.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	WriteJSON(w, http.StatusOK, map[string]string{"a": "<b>"})
	if got, want := w.Body.String(), `{"a":"<b>"}`; got != want || string(JSON(map[string]string{"a": "<b>"})) != want {
		t.Errorf("got %s; want %s", got, want)
	}
	if got := w.Header().Get("Content-Type") + " " + w.Header().Get("X-Content-Type-Options"); got != "application/json nosniff" {
		t.Errorf("headers: got %q; want application/json nosniff", got)
	}
}
