package authz

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// TestLoginDoorsAgree: the gRPC TokenService and POST /authToken share login, so the same
// credentials get the same outcome through both.
func TestLoginDoorsAgree(t *testing.T) {
	t.Parallel()
	clients, forecasterSecret := writeFastClients(t)
	h := newLoginServer(t, clients)
	grpcClient := h.a.TokenService()
	cases := []struct {
		name, id, secret string
		http             int
		code             codes.Code
	}{
		{"valid", "demo", "demo-secret", 200, codes.OK},
		{"missing secret", "demo", "", 401, codes.Unauthenticated},
		{"missing id", "", "demo-secret", 401, codes.Unauthenticated},
		{"wrong secret", "demo", "wrong", 401, codes.Unauthenticated},
		{"no right on this service", "forecaster", forecasterSecret, 403, codes.PermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, _ := json.Marshal(map[string]string{"clientId": tc.id, "clientSecret": tc.secret})
			r := h.post("/authToken", string(body))
			resp, err := grpcClient.IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: &tc.id, ClientSecret: &tc.secret})
			if r.status != tc.http || status.Code(err) != tc.code {
				t.Fatalf("got HTTP %d and gRPC %v; want %d and %v", r.status, err, tc.http, tc.code)
			}
			if tc.code == codes.OK {
				if resp.GetExpiresIn() != 86400 || strings.Count(resp.GetAccessToken(), ".") != 2 {
					t.Errorf("gRPC: got %v; want a JWT valid 86400 s", resp)
				}
				return
			}
			if got, want := status.Convert(err).Message(), errorBody(t, r).Message; got != want {
				t.Errorf("message: gRPC %q, HTTP %q; want the same", got, want)
			}
		})
	}
}

// TestAuthTokenThrottledAndBusy: 429 with Retry-After in both shapes once failures pile up, and
// 503 with Retry-After in both shapes when argon2 checks queue beyond the wait.
func TestAuthTokenThrottledAndBusy(t *testing.T) {
	t.Parallel()
	t.Run("throttled", func(t *testing.T) {
		t.Parallel()
		clients, _ := writeFastClients(t)
		h := newLoginServer(t, clients)
		var last response
		for range 30 {
			if last = h.do(http.MethodPost, "/authToken", formCT, grantOnly+"&client_id=demo&client_secret=wrong"); last.status == 429 {
				break
			}
		}
		if m := last.json(t); last.status != 429 || m["error"] != "slow_down" || last.header.Get("Retry-After") == "" {
			t.Fatalf("OAuth: got %d %s, Retry-After %q; want 429 slow_down with Retry-After", last.status, last.body, last.header.Get("Retry-After"))
		}
		r := h.post("/authToken", `{"clientId":"demo","clientSecret":"demo-secret"}`)
		if r.status != 429 || errorBody(t, r).ExceptionType != rpcerr.ExceptionThrottled || r.header.Get("Retry-After") == "" {
			t.Errorf("SPEC: got %d %s; want 429 Throttled with Retry-After", r.status, r.body)
		}
	})
	t.Run("busy", func(t *testing.T) {
		t.Parallel()
		h := newLoginServer(t, writeSlowClients(t)) // argon2id at the default cost: each check takes 0.1 s or more
		const logins = 40
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for i := range logins {
			wg.Go(func() {
				var r response
				kind := "spec"
				if i%2 == 0 {
					kind = "oauth"
					r = h.do(http.MethodPost, "/authToken", formCT, grantOnly+"&client_id=slow&client_secret="+slowSecret)
				} else {
					r = h.post("/authToken", `{"clientId":"slow","clientSecret":"`+slowSecret+`"}`)
				}
				outcome := kind + " " + http.StatusText(r.status)
				if r.status == 503 {
					m := r.json(t)
					switch {
					case r.header.Get("Retry-After") != "1":
						outcome += " without Retry-After: 1"
					case kind == "oauth" && m["error"] != "temporarily_unavailable":
						outcome += " not temporarily_unavailable"
					case kind == "spec" && (m["exceptionType"] != rpcerr.ExceptionAPI || m["message"] != "Service busy."):
						outcome += " not APIException 'Service busy.'"
					}
				}
				mu.Lock()
				got[outcome]++
				mu.Unlock()
			})
		}
		wg.Wait()
		busy := got["oauth Service Unavailable"] + got["spec Service Unavailable"]
		ok := got["oauth OK"] + got["spec OK"]
		if busy == 0 || ok == 0 || busy+ok != logins {
			t.Errorf("got %v; want some 200s, the rest 503 with Retry-After: 1 in each shape", got)
		}
	})
}
