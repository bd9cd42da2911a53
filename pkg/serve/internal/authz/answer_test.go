package authz

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// TestAnswerAuthTokenIssue: the door hands the rpc the credentials it read, whatever their shape,
// and answers what the rpc answers in the request's shape; an rpc that answers nothing without an
// error, or a token whose scope cannot be read back for an OAuth request that asked one, is the
// server's error (500, logged as its answer says), never a token of "".
func TestAnswerAuthTokenIssue(t *testing.T) {
	t.Parallel()
	issuer, err := token.New(token.Options{Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	good := &authv1.IssueTokenResponse{AccessToken: "a.b.c", ExpiresIn: 60}
	for _, tc := range []struct {
		name, contentType, body string
		resp                    *authv1.IssueTokenResponse
		err                     error
		status                  int
		want                    string // the answer's body
	}{
		{"JSON", "application/json", `{"clientID":"acme","clientSecret":"s3"}`, good, nil, 200, `{"accessToken":"a.b.c","expiresIn":60}`},
		{"form", "application/x-www-form-urlencoded", `clientId=acme&clientSecret=s3`, good, nil, 200, `{"accessToken":"a.b.c","expiresIn":60}`},
		{"OAuth", "application/x-www-form-urlencoded", `grant_type=client_credentials&client_id=acme&client_secret=s3`, good, nil, 200,
			`{"access_token":"a.b.c","expires_in":60,"token_type":"Bearer"}`},
		{"the rpc's refusal", "application/json", `{"clientId":"acme","clientSecret":"s3"}`, nil,
			rpcerr.NotAuthenticated("Authentication failed.", "nope"), 401, `{"message":"Authentication failed.","exceptionType":"NotAuthenticated","additionalInfo":"nope"}`},
		{"no answer, no error", "application/json", `{"clientId":"acme","clientSecret":"s3"}`, nil, nil, 500,
			`{"message":"Internal error.","exceptionType":"APIException","additionalInfo":"The request could not be completed; it has been logged."}`},
		{"OAuth scope of a token that cannot be read back", "application/x-www-form-urlencoded",
			`grant_type=client_credentials&client_id=acme&client_secret=s3&scope=x`, good, nil, 500,
			`{"error":"server_error","error_description":"The request could not be completed; it has been logged."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got *authv1.IssueTokenRequest
			var logged bytes.Buffer
			a := New(issuer, token.ServiceScoring, slog.New(slog.NewTextHandler(&logged, nil)), nil)
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/authToken", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.contentType)
			a.AnswerAuthToken(w, r, func(req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
				got = req
				return tc.resp, tc.err
			})
			if w.Code != tc.status {
				t.Fatalf("got %d %s; want %d", w.Code, w.Body, tc.status)
			}
			if body := strings.TrimSpace(w.Body.String()); tc.want != "" && body != tc.want {
				t.Errorf("got %s; want %s", body, tc.want)
			}
			if got.GetClientId() != "acme" || got.GetClientSecret() != "s3" {
				t.Errorf("the rpc was handed %v; want acme's credentials", got)
			}
			if isLogged := strings.Contains(logged.String(), "issue token"); isLogged != (w.Code == 500) {
				t.Errorf("logged %v (%q); want it logged exactly when the answer is 500", isLogged, logged.String())
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control: got %q; want no-store", w.Header().Get("Cache-Control"))
			}
		})
	}
}
