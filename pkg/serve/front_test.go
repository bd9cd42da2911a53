package serve

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

const scorePath = "/api/score/items/idsWithResults/standard"

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
	cfg.ClientsFile = writeClients(t)
	h := start(t, cfg)
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
	cfg.ClientsFile = writeClients(t)
	keys := writeKey(t)
	cfg.KeysDir = keys.dir
	h := start(t, cfg)
	demo := h.token("demo", "demo-secret")
	limited := h.token("standard-only", clientSecret)
	// Same key, same client, forecast audience: only the audience is wrong.
	otherService := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "forecast", "sub": "demo", "scope": "*",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": "x3", "cfp": cfpOf(t, demo)})
	expired := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "scoring", "sub": "demo", "scope": "*",
		"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix(), "jti": "x1", "cfp": cfpOf(t, demo)})
	fresh := keys.sign(t, jwt.MapClaims{"iss": "yardstick", "aud": "scoring", "sub": "demo", "scope": "*",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": "x2", "cfp": cfpOf(t, demo)})

	body := `{"items":[{"id":"ok","result":1}]}`
	for _, tc := range []struct {
		name, path, auth string
		status           int
		exception        string
	}{
		{"no token", scorePath, "", 401, rpcerr.ExceptionNotAuthenticated},
		{"garbage", scorePath, "Bearer not.a.jwt", 401, rpcerr.ExceptionNotAuthenticated},
		{"wrong scheme", scorePath, "Basic " + demo, 401, rpcerr.ExceptionNotAuthenticated},
		{"tampered", scorePath, "Bearer " + demo[:len(demo)-2] + "xx", 401, rpcerr.ExceptionNotAuthenticated},
		{"other service's token", scorePath, "Bearer " + otherService, 401, rpcerr.ExceptionNotAuthenticated},
		{"expired", scorePath, "Bearer " + expired, 401, rpcerr.ExceptionNotAuthenticated},
		{"signed by our key, not expired", scorePath, "Bearer " + fresh, 200, ""},
		{"valid", scorePath, "Bearer " + demo, 200, ""},
		{"lower-case scheme", scorePath, "bearer " + demo, 200, ""},
		{"permission granted", scorePath, "Bearer " + limited, 200, ""},
		{"permission missing", "/api/score/scale/standard", "Bearer " + limited, 403, rpcerr.ExceptionPermissionDenied},
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
		})
	}

	t.Run("error text is not HTML-escaped", func(t *testing.T) {
		r := h.post(scorePath, body)
		if !strings.Contains(string(r.body), "<accessToken>") || strings.HasSuffix(string(r.body), "\n") {
			t.Errorf("got %q; want the hint written as is and no trailing newline", r.body)
		}
	})
	t.Run("credentials are checked before the body is read", func(t *testing.T) {
		if r := h.post(scorePath, `{"items":5`); r.status != 401 {
			t.Errorf("no token, malformed body: got %d %s; want 401", r.status, r.body)
		}
		if r := h.post("/api/score/scale/standard", `{"items":5`, "Authorization", "Bearer "+limited); r.status != 403 {
			t.Errorf("no permission, malformed body: got %d %s; want 403", r.status, r.body)
		}
	})
	t.Run("claims reach the handler", func(t *testing.T) {
		r := h.post(scorePath, body, "Authorization", "Bearer "+limited)
		if got := r.json(t)["apiVersion"]; got != "standard-only" {
			t.Errorf("client seen by handler: got %v; want standard-only", got)
		}
	})
}

func TestRoutingAndTransportErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Limits.MaxBodyBytes = 2048
	h := start(t, cfg)
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
		{"GET on an API path", "GET", scorePath, "", "", 405, rpcerr.ExceptionMethodNotAllowed, "POST"},
		{"POST on healthz", "POST", "/healthz", "application/json", "{}", 405, rpcerr.ExceptionMethodNotAllowed, "GET, HEAD"},
		{"body over the limit", "POST", scorePath, "application/json", big, 413, rpcerr.ExceptionTooLarge, ""},
		{"xml body", "POST", scorePath, "application/xml", "<a/>", 415, rpcerr.ExceptionUnsupportedType, ""},
		{"form body off /authToken", "POST", scorePath, "application/x-www-form-urlencoded", "a=b", 415, rpcerr.ExceptionUnsupportedType, ""},
		{"JSON labelled form-encoded (curl -d) reaches the handler", "POST", scorePath, "application/x-www-form-urlencoded", `{"items":[{"id":"invalid","result":7}]}`, 400, rpcerr.ExceptionValidation, ""},
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
}

func TestValidationAndFaults(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")

	t.Run("every problem, keyed by top-level field, element path in the message", func(t *testing.T) {
		r := h.post(scorePath, `{"items":[{"id":"invalid","result":7}]}`, "Authorization", tok)
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
		r := h.post(scorePath, `{"items":[{"id":"a","result":"one"}]}`, "Authorization", tok)
		b := errorBody(t, r)
		want := []string{`items[0].result: must be a whole number, got "one"`}
		if r.status != 400 || !reflect.DeepEqual(b.ValidationErrors["items"], want) {
			t.Errorf("got %d %+v; want 400 with items: %q", r.status, b, want)
		}
	})
	t.Run("an authorized call reaches the service without the caller's headers", func(t *testing.T) {
		r := h.post(scorePath, `{"items":[{"id":"metadata","result":1}]}`, "Authorization", tok, "X-Caller-Header", "x", "X-Request-Id", "req-1")
		var m struct{ ApiVersion string }
		if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 {
			t.Fatalf("got %d %s; want 200", r.status, r.body)
		}
		// The call runs in the context the front authorized: no token, no caller header.
		if got, want := m.ApiVersion, ""; got != want {
			t.Errorf("metadata keys: got %q; want %q", got, want)
		}
	})
	t.Run("panic is a 500 that leaks nothing", func(t *testing.T) {
		r := h.post(scorePath, `{"items":[{"id":"panic","result":1}]}`, "Authorization", tok)
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
		r := h.post(scorePath, `{"items":[{"id":"fault","result":1}]}`, "Authorization", tok)
		if r.status != 500 || strings.Contains(string(r.body), "hunter2") {
			t.Fatalf("got %d %s; want 500 without the cause", r.status, r.body)
		}
	})
	t.Run("logs carry request id and client id, never a secret or token", func(t *testing.T) {
		r := h.post(scorePath, `{"items":[{"id":"ok","result":1}]}`, "Authorization", tok, "X-Request-Id", "trace-abc.123")
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
		if !strings.Contains(line, `"client_id":"demo"`) || !strings.Contains(line, `"route":"`+scorePath+`"`) {
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

func TestGRPCFront(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	ctx := context.Background()
	auth := authv1.NewTokenServiceClient(h.grpc)
	tok, err := auth.IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")})
	if err != nil {
		t.Fatalf("IssueToken: %v", err)
	}
	score := scoringv1.NewScoringServiceClient(h.grpc)
	req := &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("ok"), Result: ptr(int32(1))}}}

	if _, err := score.ScoreItemResults(ctx, req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: got %v; want Unauthenticated", err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok.GetAccessToken())
	got, err := score.ScoreItemResults(authed, req)
	if err != nil || got.GetAbility() != 500 {
		t.Fatalf("with token: got %v, %v; want ability 500", got, err)
	}
	// The answer's header carries the request id: the caller's when it sent a sane one, else a
	// new one.
	for _, tc := range []struct{ sent, want string }{{"caller-id.1", "caller-id.1"}, {"", ""}, {"bad id!", ""}} {
		var header metadata.MD
		callCtx := authed
		if tc.sent != "" {
			callCtx = metadata.AppendToOutgoingContext(authed, "x-request-id", tc.sent)
		}
		if _, err := score.ScoreItemResults(callCtx, req, grpc.Header(&header)); err != nil {
			t.Fatal(err)
		}
		got := header.Get("x-request-id")
		if len(got) != 1 || (tc.want != "" && got[0] != tc.want) || (tc.want == "" && (len(got[0]) != 24 || got[0] == tc.sent)) {
			t.Errorf("x-request-id %q sent: got %q; want %q (or a new 24-digit id)", tc.sent, got, tc.want)
		}
	}
	_, err = score.ScoreItemResults(authed, &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("invalid")}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("invalid: got %v; want InvalidArgument", err)
	}
	e := rpcerr.ToHTTP(err)
	if e.Status != 400 || !reflect.DeepEqual(e.Body.ValidationErrors["items"], []string{"items[0].result: must be 0 or 1, got 7"}) {
		t.Errorf("status details: got %+v; want the same field violations as the JSON front", e)
	}

	hc := healthpb.NewHealthClient(h.grpc)
	hr, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: got %v, %v; want SERVING without a token", hr, err)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	h.post(scorePath, `{"items":[{"id":"ok","result":1}]}`, "Authorization", tok)

	for _, tc := range []struct{ path, want string }{
		{"/healthz", `"ok"`},
		{"/readyz", `"ready"`},
		{"/metrics", `yardstick_requests_total{code="200",front="http",route="` + scorePath + `",service="scoring"} 1`},
		{"/openapi.json", `"/api/score/items/idsWithResults/bayes/strands"`},
		{"/.well-known/jwks.json", `"EdDSA"`},
	} {
		r := h.do(http.MethodGet, tc.path, "", "")
		if r.status != 200 || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("GET %s: got %d, body without %s", tc.path, r.status, tc.want)
		}
	}
	r := h.do(http.MethodGet, "/openapi.json", "", "")
	if strings.Contains(string(r.body), "/api/forecast/") {
		t.Error("scoring's OpenAPI document lists forecast paths")
	}
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	var last response
	for i := 0; i < 30; i++ {
		last = h.post("/authToken", `{"clientId":"demo","clientSecret":"wrong"}`)
		if last.status == http.StatusTooManyRequests {
			break
		}
	}
	if last.status != http.StatusTooManyRequests {
		t.Fatalf("after 30 failures: got %d; want 429", last.status)
	}
	if errorBody(t, last).ExceptionType != rpcerr.ExceptionThrottled || last.header.Get("Retry-After") == "" {
		t.Errorf("got %s, Retry-After %q; want Throttled with Retry-After", last.body, last.header.Get("Retry-After"))
	}
	// Headers a caller writes do not move it to another bucket.
	for _, forged := range []string{"1.2.3.4", "é", "6.6.6.6, 7.7.7.7"} {
		r := h.post("/authToken", `{"clientId":"demo","clientSecret":"wrong"}`, "X-Forwarded-For", forged, "Grpc-Metadata-X-Yardstick-Client-Addr", "5.5.5.5")
		if r.status != http.StatusTooManyRequests {
			t.Errorf("X-Forwarded-For %q: got %d; want still 429", forged, r.status)
		}
	}
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	done := make(chan response, 1)
	go func() {
		done <- h.post(scorePath, `{"items":[{"id":"slow","result":1}]}`, "Authorization", tok)
	}()
	<-h.fake.started
	h.cancel() // SIGTERM
	// Readiness turns false while the request is still in flight.
	deadline := time.Now().Add(5 * time.Second)
	for h.srv.ready.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.srv.ready.Load() {
		t.Error("still ready after shutdown began")
	}
	close(h.fake.release)
	r := <-done
	if r.status != 200 {
		t.Errorf("in-flight request during shutdown: got %d %s; want 200", r.status, r.body)
	}
	select {
	case err := <-h.stopped:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		h.stopped <- nil // for Cleanup's stop
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

func ptr[T any](v T) *T { return &v }

type testKey struct {
	dir, kid string
	priv     ed25519.PrivateKey
}

// writeKey writes a signing key into a keys directory the server loads.
func writeKey(t *testing.T) testKey {
	t.Helper()
	kid, pemBytes, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{dir: dir, kid: kid, priv: key.(ed25519.PrivateKey)}
}

func (k testKey) sign(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTrailingSlashAndChallenge: a documented path with a trailing slash is the same path, and a
// 401 on a protected path names the Bearer scheme (RFC 6750 §3).
func TestTrailingSlashAndChallenge(t *testing.T) {
	t.Parallel()
	h := start(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	body := `{"items":[{"id":"ok","result":1}]}`
	plain := h.post(scorePath, body, "Authorization", tok)
	slash := h.post(scorePath+"/", body, "Authorization", tok)
	if plain.status != 200 || slash.status != 200 || string(plain.body) != string(slash.body) {
		t.Errorf("with and without a trailing slash: got %d %s and %d %s; want the same 200", plain.status, plain.body, slash.status, slash.body)
	}
	if r := h.post("/authToken/", `{"clientId":"demo","clientSecret":"demo-secret"}`); r.status != 200 {
		t.Errorf("/authToken/: got %d %s; want 200", r.status, r.body)
	}
	if r := h.do(http.MethodGet, "/healthz/", "", ""); r.status != 200 {
		t.Errorf("/healthz/: got %d; want 200", r.status)
	}
	r := h.post(scorePath, body)
	if got := r.header.Get("WWW-Authenticate"); r.status != 401 || got != `Bearer realm="yardstick"` {
		t.Errorf("no token: got %d with WWW-Authenticate %q; want 401 with %q", r.status, got, `Bearer realm="yardstick"`)
	}
	if r := h.post(scorePath, body, "Authorization", tok); r.header.Get("WWW-Authenticate") != "" {
		t.Errorf("200 carries WWW-Authenticate %q; want none", r.header.Get("WWW-Authenticate"))
	}
}
