package serve

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

func TestGRPCFront(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	ctx := context.Background()
	auth := authv1.NewTokenServiceClient(h.grpc)
	tok, err := auth.IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")})
	if err != nil {
		t.Fatalf("IssueToken: %v", err)
	}
	req := echoRequest("ok", "x", 1)
	call := func(ctx context.Context, req *dynamicpb.Message, opts ...grpc.CallOption) (*dynamicpb.Message, error) {
		out := dynamicpb.NewMessage(echoOut)
		return out, h.grpc.Invoke(ctx, throwawayMethod, req, out, opts...)
	}

	if _, err := call(ctx, req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: got %v; want Unauthenticated", err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok.GetAccessToken())
	got, err := call(authed, req)
	if text, client := textOf(got); err != nil || text != "OK" || client != "demo" {
		t.Fatalf("with token: got %v, %v; want OK for demo", got, err)
	}
	// The answer's header carries the request id: the caller's when it sent a sane one, else a
	// new one.
	for _, tc := range []struct{ sent, want string }{{"caller-id.1", "caller-id.1"}, {"", ""}, {"bad id!", ""}} {
		var header metadata.MD
		callCtx := authed
		if tc.sent != "" {
			callCtx = metadata.AppendToOutgoingContext(authed, "x-request-id", tc.sent)
		}
		if _, err := call(callCtx, req, grpc.Header(&header)); err != nil {
			t.Fatal(err)
		}
		got := header.Get("x-request-id")
		if len(got) != 1 || (tc.want != "" && got[0] != tc.want) || (tc.want == "" && (len(got[0]) != 24 || got[0] == tc.sent)) {
			t.Errorf("x-request-id %q sent: got %q; want %q (or a new 24-digit id)", tc.sent, got, tc.want)
		}
	}
	_, err = call(authed, echoRequest("invalid"))
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

func TestThrottle(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
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
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	body := `{"text":"ok"}`
	plain := h.post(throwawayPath, body, "Authorization", tok)
	slash := h.post(throwawayPath+"/", body, "Authorization", tok)
	if plain.status != 200 || slash.status != 200 || string(plain.body) != string(slash.body) {
		t.Errorf("with and without a trailing slash: got %d %s and %d %s; want the same 200", plain.status, plain.body, slash.status, slash.body)
	}
	if r := h.post("/authToken/", `{"clientId":"demo","clientSecret":"demo-secret"}`); r.status != 200 {
		t.Errorf("/authToken/: got %d %s; want 200", r.status, r.body)
	}
	if r := h.do(http.MethodGet, "/healthz/", "", ""); r.status != 200 {
		t.Errorf("/healthz/: got %d; want 200", r.status)
	}
	r := h.post(throwawayPath, body)
	if got := r.header.Get("WWW-Authenticate"); r.status != 401 || got != `Bearer realm="yardstick"` {
		t.Errorf("no token: got %d with WWW-Authenticate %q; want 401 with %q", r.status, got, `Bearer realm="yardstick"`)
	}
	if r := h.post(throwawayPath, body, "Authorization", tok); r.header.Get("WWW-Authenticate") != "" {
		t.Errorf("200 carries WWW-Authenticate %q; want none", r.header.Get("WWW-Authenticate"))
	}
}
