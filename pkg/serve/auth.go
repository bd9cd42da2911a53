package serve

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

type claimsKey struct{}

// ClaimsFrom returns the verified token claims of the request, for handlers that need the client.
func ClaimsFrom(ctx context.Context) (token.Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(token.Claims)
	return c, ok
}

// authorize checks a call's bearer token against the method's rule and returns the context the
// handler runs with. The JSON front calls it before it reads a body, the gRPC interceptor for
// every call: the same rule, whichever door a caller uses.
func (s *Server) authorize(ctx context.Context, fullMethod, bearer string) (context.Context, error) {
	return s.authorizeRoute(ctx, s.routes.ByMethod[fullMethod], bearer)
}

// authorizeRoute is authorize for a route already looked up (nil: a method not served).
func (s *Server) authorizeRoute(ctx context.Context, r *routes.Route, bearer string) (context.Context, error) {
	if r == nil || !r.Ruled {
		return ctx, rpcerr.PermissionDenied("Permission denied.", "This method is not open to clients.")
	}
	rule := r.Rule
	if rule.Public {
		return ctx, nil
	}
	if bearer == "" {
		return ctx, rpcerr.NotAuthenticated("Authentication failed.",
			"Missing bearer token: send 'Authorization: Bearer <accessToken>' with a token from POST /authToken.")
	}
	claims, err := s.issuer.Verify(bearer, s.cfg.Service)
	if err != nil {
		s.log.DebugContext(ctx, "token rejected", "reason", err.Error(), "request_id", RequestID(ctx))
		return ctx, rpcerr.NotAuthenticated("Authentication failed.",
			fmt.Sprintf("The token is invalid, expired or not for the %s service; get a new one from POST /authToken.", s.cfg.Service))
	}
	noteClient(ctx, claims.ClientID)
	if err := claims.Require(rule.Permission); err != nil {
		return ctx, rpcerr.PermissionDenied("Permission denied.",
			fmt.Sprintf("The client lacks the %q permission this endpoint needs.", rule.Permission))
	}
	return context.WithValue(ctx, claimsKey{}, claims), nil
}

// bearerFromHeader reads "Bearer <token>" (scheme case-insensitive) from an Authorization value.
func bearerFromHeader(values []string) string {
	for _, v := range values {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return ""
}

// bearerToken reads the call's bearer token (ValueFromIncomingContext: no copy of the metadata).
func bearerToken(ctx context.Context) string {
	return bearerFromHeader(metadata.ValueFromIncomingContext(ctx, "authorization"))
}

// remoteAddress is the caller's address for throttling. The JSON front computed it from the HTTP
// request (callerAddr); a direct gRPC caller is its connection's address, or, when that is a
// trusted proxy, what the proxies forwarded.
func remoteAddress(ctx context.Context, trusted []netip.Prefix) string {
	if fc := frontCallFrom(ctx); fc != nil {
		return fc.address()
	}
	var chain []string
	for _, v := range metadata.ValueFromIncomingContext(ctx, "x-forwarded-for") {
		chain = append(chain, splitHops(v)...)
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		chain = append(chain, p.Addr.String())
	}
	return clientOf(chain, trusted)
}

func splitHops(v string) []string {
	var hops []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hops = append(hops, h)
		}
	}
	return hops
}

// clientOf walks a forwarding chain (X-Forwarded-For entries, then the connection's peer) from
// the right and returns the first address that is not a trusted proxy: everything to its left
// was written by the client and may be forged. Ports are dropped.
func clientOf(chain []string, trusted []netip.Prefix) string {
	for i := len(chain) - 1; i >= 0; i-- {
		addr, ok := parseHop(chain[i])
		if !ok {
			return chain[i]
		}
		if !inPrefixes(addr, trusted) || i == 0 {
			return addr.String()
		}
	}
	return "unknown"
}

func parseHop(h string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return a.Unmap(), err == nil
}

func inPrefixes(a netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
