// Package authz decides who may call what: it checks a call's bearer token against its route's
// access rule (Authorize), issues tokens (the TokenService, whose IssueToken POST /authToken calls
// too), and finds the caller's address for the login throttle. Rules come from the route table
// (internal/routes); clients, keys and tokens from pkg/token.
package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Authorizer checks tokens and issues them for one service.
type Authorizer struct {
	issuer  *token.Issuer
	service string // the token audience
	log     *slog.Logger
	trusted []netip.Prefix // proxies in front (YARDSTICK_TRUSTED_PROXIES)
}

// New is the authorizer of service; trusted are the proxies that forward the caller's address.
func New(issuer *token.Issuer, service string, log *slog.Logger, trusted []netip.Prefix) *Authorizer {
	return &Authorizer{issuer: issuer, service: service, log: log, trusted: trusted}
}

type grantKey struct{} // the context key of the verified claims permit grants a call

// ClaimsFrom returns the verified token claims of the request, for handlers that need the client.
func ClaimsFrom(ctx context.Context) (token.Claims, bool) {
	claims, ok := ctx.Value(grantKey{}).(token.Claims)
	return claims, ok
}

// Authorize checks a call's bearer token against its route's rule (nil: a method not served) and
// returns the context the handler runs with, the token's claims in it.
func (a *Authorizer) Authorize(ctx context.Context, r *routes.Route, bearer string) (context.Context, error) {
	if r == nil || !r.Ruled || r.Rule.Public {
		return permit(ctx, r, token.Claims{}) // refused, or open to all: no token to check
	}
	if bearer == "" {
		return ctx, rpcerr.NotAuthenticated("Authentication failed.",
			"Missing bearer token: send 'Authorization: Bearer <accessToken>' with a token from POST /authToken.")
	}
	claims, err := a.issuer.Verify(bearer, a.service)
	if err != nil {
		a.log.DebugContext(ctx, "token rejected", "reason", err.Error(), "request_id", reqinfo.ID(ctx))
		return ctx, a.refused(err)
	}
	noteClient(ctx, claims.ClientID)
	return permit(ctx, r, claims)
}

// refused is the answer for a token Verify refused, without a word of the token itself.
func (a *Authorizer) refused(err error) error {
	reason, info := rpcerr.ReasonTokenInvalid,
		"The token could not be read: it is not a token of this deployment, or it was altered or cut; send the accessToken exactly as POST /authToken gave it."
	switch {
	case errors.Is(err, token.ErrTokenExpired):
		reason, info = rpcerr.ReasonTokenExpired, "The token has expired; get a new one from POST /authToken."
	case errors.Is(err, token.ErrTokenOtherService):
		reason, info = rpcerr.ReasonTokenOtherService,
			fmt.Sprintf("The token is for another service; a token works only on the service that issued it: get one from this (%s) service's POST /authToken.", a.service)
	case errors.Is(err, token.ErrTokenRevoked):
		reason, info = rpcerr.ReasonTokenRevoked,
			"The token was revoked: its client has since been removed, registered again or given a new secret; get a new one from POST /authToken."
	}
	return rpcerr.InvalidToken(reason, "Authentication failed.", info)
}

// permit checks verified claims against the route r's rule and returns the handler's context.
func permit(ctx context.Context, r *routes.Route, claims token.Claims) (context.Context, error) {
	if r == nil || !r.Ruled {
		return ctx, rpcerr.PermissionDenied("Permission denied.", "This method is not open to clients.")
	}
	if r.Rule.Public {
		return ctx, nil
	}
	for i, p := range []string{r.Rule.Permission, r.Rule.Also} {
		if i > 0 && p == "" {
			continue
		}
		if err := claims.Require(p); err != nil {
			return ctx, rpcerr.PermissionDenied("Permission denied.",
				fmt.Sprintf("The client lacks the %q permission this endpoint needs.", p))
		}
	}
	return context.WithValue(ctx, grantKey{}, claims), nil
}

// Bearer reads "Bearer <token>" from the Authorization values.
func Bearer(values []string) string {
	tok, _ := authParam(values, "bearer")
	return tok
}

// authParam is the credentials of the first Authorization value of scheme (case-insensitive).
func authParam(values []string, scheme string) (string, bool) {
	for _, v := range values {
		s, param, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(s, scheme) {
			return strings.TrimSpace(param), true
		}
	}
	return "", false
}

// BearerFromMetadata reads a gRPC call's bearer token (without copying the metadata).
func BearerFromMetadata(ctx context.Context) string {
	return Bearer(metadata.ValueFromIncomingContext(ctx, "authorization"))
}

// ClientID is the authenticated client of ctx, or "".
func ClientID(ctx context.Context) string {
	claims, _ := ClaimsFrom(ctx)
	return claims.ClientID
}

// noteClient records the authenticated client for the request's log line.
func noteClient(ctx context.Context, clientID string) {
	if ri := reqinfo.From(ctx); ri != nil {
		ri.ClientID = clientID
	}
}
