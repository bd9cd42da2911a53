package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"google.golang.org/protobuf/types/dynamicpb"
)

// compactToken is the token answer byte for byte: no whitespace whatever protojson's build-keyed
// randomisation chooses.
var compactToken = regexp.MustCompile(`^\{"accessToken":"[A-Za-z0-9_.-]+","expiresIn":86400\}$`)

func errorBody(t *testing.T, r response) rpcerr.ErrorBody {
	t.Helper()
	m := r.json(t)
	for _, k := range []string{"message", "exceptionType", "additionalInfo"} {
		if _, ok := m[k].(string); !ok {
			t.Fatalf("error body lacks string %q: %s", k, r.body)
		}
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type: got %q; want application/json", ct)
	}
	b := rpcerr.ErrorBody{Message: m["message"].(string), ExceptionType: m["exceptionType"].(string), AdditionalInfo: m["additionalInfo"].(string)}
	if ve, ok := m["validationErrors"].(map[string]any); ok {
		b.ValidationErrors = map[string][]string{}
		for k, v := range ve {
			for _, s := range v.([]any) {
				b.ValidationErrors[k] = append(b.ValidationErrors[k], s.(string))
			}
		}
	}
	return b
}

func TestForbiddenService(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ClientsFile = writeTestClients(t)
	h := startTest(t, cfg)
	r := h.post("/authToken", `{"clientId":"forecaster","clientSecret":"`+clientSecret+`"}`)
	if r.status != http.StatusForbidden {
		t.Fatalf("forecast-only client at scoring: got %d %s; want 403", r.status, r.body)
	}
	b := errorBody(t, r)
	if b.ExceptionType != rpcerr.ExceptionPermissionDenied || !strings.Contains(strings.ToLower(b.Message), "lacks permission") {
		t.Errorf("got %+v; want PermissionDenied stating the client lacks permission", b)
	}
}

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ClientsFile = writeTestClients(t)
	keys := writeKey(t)
	cfg.KeysDir = keys.dir
	h := startTest(t, cfg)
	demo := h.token("demo", "demo-secret")
	limited := h.token("echo-only", clientSecret)
	// Same key, same client, forecast audience: only the audience is wrong.
	otherService := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "forecast", "sub": "demo", "scope": "*",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": "x3", "cfp": cfpOf(t, demo)})
	expired := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "scoring", "sub": "demo", "scope": "*",
		"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix(), "jti": "x1", "cfp": cfpOf(t, demo)})
	fresh := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "scoring", "sub": "demo", "scope": "*",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": "x2", "cfp": cfpOf(t, demo)})

	// A secret changed since the token was issued: its fingerprint is not the client's.
	revoked := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "scoring", "sub": "demo", "scope": "*",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": "x4", "cfp": "AAAAAAAAAAAAAAAA"})

	// The challenges of RFC 6750 §3: plain without a token, invalid_token saying why with one.
	const plain = `Bearer realm="yardstick"`
	invalid := func(desc string) string {
		return `Bearer realm="yardstick", error="invalid_token", error_description="` + desc + `"`
	}
	const (
		unreadable = "The token could not be read: it is not a token of this deployment, or it was altered or cut; send the accessToken exactly as POST /authToken gave it."
		expiredMsg = "The token has expired; get a new one from POST /authToken."
		otherMsg   = "The token is for another service; a token works only on the service that issued it: get one from this (scoring) service's POST /authToken."
		revokedMsg = "The token was revoked: its client has since been removed, registered again or given a new secret; get a new one from POST /authToken."
	)
	body := `{"text":"ok"}`
	for _, tc := range []struct {
		name, path, auth string
		status           int
		exception        string
		challenge        string
	}{
		{"no token", throwawayPath, "", 401, rpcerr.ExceptionNotAuthenticated, plain},
		{"garbage", throwawayPath, "Bearer not.a.jwt", 401, rpcerr.ExceptionNotAuthenticated, invalid(unreadable)},
		{"wrong scheme", throwawayPath, "Basic " + demo, 401, rpcerr.ExceptionNotAuthenticated, plain},
		{"tampered", throwawayPath, "Bearer " + demo[:len(demo)-2] + "xx", 401, rpcerr.ExceptionNotAuthenticated, invalid(unreadable)},
		{"other service's token", throwawayPath, "Bearer " + otherService, 401, rpcerr.ExceptionNotAuthenticated, invalid(otherMsg)},
		{"expired", throwawayPath, "Bearer " + expired, 401, rpcerr.ExceptionNotAuthenticated, invalid(expiredMsg)},
		{"revoked", throwawayPath, "Bearer " + revoked, 401, rpcerr.ExceptionNotAuthenticated, invalid(revokedMsg)},
		{"signed by our key, not expired", throwawayPath, "Bearer " + fresh, 200, "", ""},
		{"valid", throwawayPath, "Bearer " + demo, 200, "", ""},
		{"lower-case scheme", throwawayPath, "bearer " + demo, 200, "", ""},
		{"permission granted", throwawayPath, "Bearer " + limited, 200, "", ""},
		{"permission missing", throwawayShoutPath, "Bearer " + limited, 403, rpcerr.ExceptionPermissionDenied, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.auth != "" {
				hdr = []string{"Authorization", tc.auth}
			}
			r := h.post(tc.path, body, hdr...)
			if r.status != tc.status {
				t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
			}
			if tc.exception != "" {
				if got := errorBody(t, r).ExceptionType; got != tc.exception {
					t.Errorf("exceptionType: got %q; want %q", got, tc.exception)
				}
			}
			if got := r.header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate: got %q; want %q", got, tc.challenge)
			}
			if tok := strings.TrimPrefix(tc.auth, "Bearer "); tc.status == 401 && len(tok) > 8 && (strings.Contains(string(r.body), tok) || strings.Contains(r.header.Get("WWW-Authenticate"), tok)) {
				t.Errorf("the answer echoes the token: %s", r.body)
			}
		})
	}

	t.Run("gRPC tells the same refusals apart by ErrorInfo reason", func(t *testing.T) {
		for _, tc := range []struct{ name, auth, reason, info string }{
			{"no token", "", "NOT_AUTHENTICATED", "Missing bearer token: send 'Authorization: Bearer <accessToken>' with a token from POST /authToken."},
			{"garbage", "Bearer not.a.jwt", "TOKEN_INVALID", unreadable},
			{"other service's token", "Bearer " + otherService, "TOKEN_OTHER_SERVICE", otherMsg},
			{"expired", "Bearer " + expired, "TOKEN_EXPIRED", expiredMsg},
			{"revoked", "Bearer " + revoked, "TOKEN_REVOKED", revokedMsg},
		} {
			ctx := context.Background()
			if tc.auth != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", tc.auth)
			}
			err := h.grpc.Invoke(ctx, throwawayMethod, echoRequest(""), dynamicpb.NewMessage(echoOut))
			info := errorInfoOf(err)
			if status.Code(err) != codes.Unauthenticated || info.GetReason() != tc.reason || info.GetMetadata()[rpcerr.InfoKey] != tc.info {
				t.Errorf("%s: got %v, ErrorInfo %v; want Unauthenticated, reason %s, additionalInfo %q", tc.name, err, info, tc.reason, tc.info)
			}
		}
	})
	t.Run("error text is not HTML-escaped", func(t *testing.T) {
		r := h.post(throwawayPath, body)
		if !strings.Contains(string(r.body), "<accessToken>") || strings.HasSuffix(string(r.body), "\n") {
			t.Errorf("got %q; want the hint written as is and no trailing newline", r.body)
		}
	})
	t.Run("credentials are checked before the body is read", func(t *testing.T) {
		if r := h.post(throwawayPath, `{"text":5`); r.status != 401 {
			t.Errorf("no token, malformed body: got %d %s; want 401", r.status, r.body)
		}
		if r := h.post(throwawayShoutPath, `{"text":5`, "Authorization", "Bearer "+limited); r.status != 403 {
			t.Errorf("no permission, malformed body: got %d %s; want 403", r.status, r.body)
		}
	})
	t.Run("claims reach the handler", func(t *testing.T) {
		r := h.post(throwawayPath, body, "Authorization", "Bearer "+limited)
		if got := r.json(t)["client"]; got != "echo-only" {
			t.Errorf("client seen by handler: got %v; want echo-only", got)
		}
	})
}

func TestRoutingAndTransportErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxBodyBytes = 2048
	h := startTest(t, cfg)
	tok := "Bearer " + h.token("demo", "demo-secret")
	big := `{"items":[` + strings.Repeat(`{"id":"x","result":1},`, 200) + `{"id":"x","result":1}]}`

	for _, tc := range []struct {
		name, method, path, contentType, body string
		status                                int
		exception                             string
		allow                                 string
	}{
		{"unknown path", "POST", "/api/nope", "application/json", "{}", 404, rpcerr.ExceptionNotFound, ""},
		{"unknown path GET", "GET", "/favicon.ico", "", "", 404, rpcerr.ExceptionNotFound, ""},
		{"GET on an API path", "GET", throwawayPath, "", "", 405, rpcerr.ExceptionMethodNotAllowed, "POST"},
		{"POST on healthz", "POST", "/healthz", "application/json", "{}", 405, rpcerr.ExceptionMethodNotAllowed, "GET, HEAD"},
		{"body over the limit", "POST", throwawayPath, "application/json", big, 413, rpcerr.ExceptionTooLarge, ""},
		{"xml body", "POST", throwawayPath, "application/xml", "<a/>", 415, rpcerr.ExceptionUnsupportedType, ""},
		{"form body off /authToken", "POST", throwawayPath, "application/x-www-form-urlencoded", "a=b", 415, rpcerr.ExceptionUnsupportedType, ""},
		{"JSON labelled form-encoded (curl -d) reaches the handler", "POST", throwawayPath, "application/x-www-form-urlencoded", `{"text":"invalid"}`, 400, rpcerr.ExceptionValidation, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.contentType, tc.body, "Authorization", tok)
			if r.status != tc.status {
				t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
			}
			if got := errorBody(t, r).ExceptionType; got != tc.exception {
				t.Errorf("exceptionType: got %q; want %q", got, tc.exception)
			}
			if tc.allow != "" && r.header.Get("Allow") != tc.allow {
				t.Errorf("Allow: got %q; want %q", r.header.Get("Allow"), tc.allow)
			}
		})
	}

	// The limit is stated whether the body announced its length or came chunked; a body of
	// exactly the limit is read; the service's batch path is offered for many requests.
	const stated = "The request body exceeds the size limit of 2048 bytes (2 KiB). Send many requests as records of POST " +
		throwawayBatchPath + " (NDJSON, one a line), which has no size limit."
	padded := func(n int) string { return `{"text":"x"` + strings.Repeat(" ", n-len(`{"text":"x"}`)) + "}" }
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"2048 bytes, announced", padded(2048), false, 200},
		{"2049 bytes, announced", padded(2049), false, 413},
		{"2048 bytes, chunked", padded(2048), true, 200},
		{"2049 bytes, chunked", padded(2049), true, 413},
	} {
		t.Run("413 states the limit: "+tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // no length known: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, h.base+throwawayPath, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var e rpcerr.ErrorBody
			_ = json.Unmarshal(b, &e)
			if resp.StatusCode != tc.status || (tc.status == 413 && e.AdditionalInfo != stated) {
				t.Errorf("got %d %s; want %d (a 413 saying %q)", resp.StatusCode, b, tc.status, stated)
			}
		})
	}
}

func TestValidationAndFaults(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")

	t.Run("every problem, keyed by top-level field, element path in the message", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"invalid"}`, "Authorization", tok)
		if r.status != 400 {
			t.Fatalf("got %d; want 400", r.status)
		}
		b := errorBody(t, r)
		want := map[string][]string{
			"items":          {"items[0].result: must be 0 or 1, got 7"},
			"framework":      {"is required"},
			"nonFieldErrors": {"request-wide problem"},
		}
		if b.Message != "Invalid input." || b.ExceptionType != rpcerr.ExceptionValidation || !reflect.DeepEqual(b.ValidationErrors, want) {
			t.Errorf("got %+v; want message \"Invalid input.\", ValidationError and %v", b, want)
		}
	})
	t.Run("wrong JSON type names the field", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"a","items":[{"id":"a","result":"one"}]}`, "Authorization", tok)
		b := errorBody(t, r)
		want := []string{`items[0].result: must be a whole number, got "one"`}
		if r.status != 400 || !reflect.DeepEqual(b.ValidationErrors["items"], want) {
			t.Errorf("got %d %+v; want 400 with items: %q", r.status, b, want)
		}
	})
	t.Run("an authorized call reaches the service without the caller's headers", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"metadata"}`, "Authorization", tok, "X-Caller-Header", "x", "X-Request-Id", "req-1")
		var m struct{ Text string }
		if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 {
			t.Fatalf("got %d %s; want 200", r.status, r.body)
		}
		// The call runs in the context the front authorized: no token, no caller header.
		if got, want := m.Text, ""; got != want {
			t.Errorf("metadata keys: got %q; want %q", got, want)
		}
	})
	t.Run("panic is a 500 that leaks nothing", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"panic"}`, "Authorization", tok)
		if r.status != 500 || strings.Contains(string(r.body), "secret internal detail") {
			t.Fatalf("got %d %s; want 500 without the panic value", r.status, r.body)
		}
		if got := errorBody(t, r).ExceptionType; got != rpcerr.ExceptionAPI {
			t.Errorf("exceptionType: got %q; want APIException", got)
		}
		if !strings.Contains(h.logs.String(), "secret internal detail") {
			t.Error("the panic was not logged")
		}
	})
	t.Run("an unexpected error is a 500 that leaks nothing", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"fault"}`, "Authorization", tok)
		if r.status != 500 || strings.Contains(string(r.body), "hunter2") {
			t.Fatalf("got %d %s; want 500 without the cause", r.status, r.body)
		}
	})
	t.Run("logs carry request id and client id, never a secret or token", func(t *testing.T) {
		r := h.post(throwawayPath, `{"text":"ok"}`, "Authorization", tok, "X-Request-Id", "trace-abc.123")
		if r.header.Get("X-Request-Id") != "trace-abc.123" {
			t.Errorf("X-Request-Id: got %q; want the caller's", r.header.Get("X-Request-Id"))
		}
		logs := h.logs.String()
		var line string
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, "trace-abc.123") {
				line = l
			}
		}
		if !strings.Contains(line, `"client_id":"demo"`) || !strings.Contains(line, `"route":"`+throwawayPath+`"`) {
			t.Errorf("log line: got %q; want request id, client id and route", line)
		}
		if strings.Contains(logs, strings.TrimPrefix(tok, "Bearer ")) {
			t.Error("logs contain a token")
		}
		// The demo secret is public and announced once at start; no request line may repeat it.
		if n := strings.Count(logs, "demo-secret"); n != 1 {
			t.Errorf("demo secret appears %d times in the logs; want only the dev-mode announcement", n)
		}
	})
}
