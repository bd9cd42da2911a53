package authz

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// Issue is a /authToken request's login: the IssueToken rpc, which the HTTP front calls through
// the chain with the ticket the gate admitted the request with, as the gRPC port calls it.
type Issue func(*authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error)

// AnswerAuthToken answers a POST /authToken the HTTP front admitted: it reads the credentials,
// logs in with issue and answers. A request with grant_type is OAuth 2.0 client credentials
// (RFC 6749 §4.4), answered in its shape; any other in the original API's.
func (a *Authorizer) AnswerAuthToken(w http.ResponseWriter, r *http.Request, issue Issue) {
	NoStore(w.Header())
	req, rerr := readLoginRequest(w, r)
	if rerr != nil {
		if req.oauth {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", rerr.msg, 0)
			return
		}
		rpcerr.Write(w, rerr.answer)
		return
	}
	if req.oauth && req.grant != "client_credentials" {
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "Only grant_type=client_credentials is supported.", 0)
		return
	}
	var tok token.Token
	err := req.basicErr
	if err == nil {
		tok, err = a.issue(r.Context(), issue, req)
	}
	switch {
	case err == nil:
		writeToken(w, req, tok)
	case req.oauth:
		writeOAuthLoginError(w, err, req.basic)
	default: // the original API's error body
		e := rpcerr.ToHTTP(err)
		if e.Status == http.StatusUnauthorized && req.basic {
			w.Header().Set("WWW-Authenticate", basicChallenge)
		}
		rpcerr.Write(w, e)
	}
}

// NoStore marks a /authToken answer not to be cached (RFC 6749 §5.1: tokens and credentials).
func NoStore(h http.Header) { h.Set("Cache-Control", "no-store"); h.Set("Pragma", "no-cache") }

// issue logs req's client in by the IssueToken rpc. An OAuth 2.0 request that asked a scope is
// answered the scope granted (RFC 6749 §5.1), which the rpc's answer does not carry: the token's
// own, read back from it. A token that cannot be, or no answer, is the server's error (logged).
func (a *Authorizer) issue(ctx context.Context, issue Issue, req loginRequest) (token.Token, error) {
	resp, err := issue(&authv1.IssueTokenRequest{ClientId: &req.clientID, ClientSecret: &req.secret})
	var claims token.Claims
	switch {
	case err != nil:
		return token.Token{}, err
	case resp == nil:
		err = errors.New("the rpc answered nothing")
	case req.oauth && req.scope != "":
		claims, err = a.issuer.Verify(resp.GetAccessToken(), a.service)
	}
	if err != nil {
		return token.Token{}, rpcerr.Fault(ctx, a.log, "issue token", err)
	}
	return token.Token{AccessToken: resp.GetAccessToken(), ExpiresIn: int64(resp.GetExpiresIn()), Scope: claims.Scope}, nil
}

// writeToken answers a login with its token, in OAuth 2.0's shape (RFC 6749 §5.1) or the API's.
func writeToken(w http.ResponseWriter, req loginRequest, tok token.Token) {
	if !req.oauth {
		rpcerr.WriteJSON(w, http.StatusOK, struct {
			AccessToken string `json:"accessToken"`
			ExpiresIn   int64  `json:"expiresIn"`
		}{tok.AccessToken, tok.ExpiresIn})
		return
	}
	out := map[string]any{"access_token": tok.AccessToken, "token_type": "Bearer", "expires_in": tok.ExpiresIn}
	if req.scope != "" {
		out["scope"] = strings.Join(tok.Scope, " ") // RFC 6749 §5.1: the scope granted, when one was asked
	}
	rpcerr.WriteJSON(w, http.StatusOK, out)
}

const basicChallenge = `Basic realm="yardstick", charset="UTF-8"` // the WWW-Authenticate of a 401 to Basic

// writeOAuthLoginError answers a failed OAuth 2.0 login with RFC 6749 §5.2's error codes;
// throttled and busy, which §5.2 does not cover, keep their HTTP status and Retry-After.
func writeOAuthLoginError(w http.ResponseWriter, err error, basic bool) {
	e := rpcerr.ToHTTP(err)
	switch status.Code(err) {
	case codes.Unauthenticated:
		// §5.2: 401 with the challenge when the client authenticated with the Authorization header.
		code := http.StatusBadRequest
		if basic {
			code = http.StatusUnauthorized
			w.Header().Set("WWW-Authenticate", basicChallenge)
		}
		writeOAuthError(w, code, "invalid_client", "Client authentication failed: "+e.Body.AdditionalInfo, 0)
	case codes.PermissionDenied:
		writeOAuthError(w, http.StatusBadRequest, "unauthorized_client", e.Body.AdditionalInfo, 0)
	case codes.ResourceExhausted:
		// slow_down: the OAuth error registry's code for "poll less often" (RFC 8628 §3.5).
		writeOAuthError(w, http.StatusTooManyRequests, "slow_down", e.Body.AdditionalInfo, e.RetryAfter)
	case codes.Unavailable:
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "Too many logins are being checked; retry later.", e.RetryAfter)
	default:
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "The request could not be completed; it has been logged.", 0)
	}
}

// writeOAuthError writes {"error","error_description"} (RFC 6749 §5.2).
func writeOAuthError(w http.ResponseWriter, code int, errCode, description string, retryAfter int64) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	}
	rpcerr.WriteJSON(w, code, map[string]string{"error": errCode, "error_description": description})
}
