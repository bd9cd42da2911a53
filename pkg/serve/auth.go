package serve

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// accessRule is what a method requires, read from the contract's method options.
type accessRule struct {
	public     bool
	permission string
}

// infrastructure services carry no options of ours and need no token.
var publicServices = map[string]bool{
	"grpc.health.v1.Health":                    true,
	"grpc.reflection.v1.ServerReflection":      true,
	"grpc.reflection.v1alpha.ServerReflection": true,
}

// accessRules reads the access rule of every method of info from the method options
// (yardstick.auth.v1.public / permission). A method of ours with neither option gets no rule and is
// refused: a forgotten option fails closed.
func accessRules(services map[string]grpc.ServiceInfo) (map[string]accessRule, error) {
	rules := map[string]accessRule{}
	for svcName, info := range services {
		if publicServices[svcName] {
			for _, m := range info.Methods {
				rules["/"+svcName+"/"+m.Name] = accessRule{public: true}
			}
			continue
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
		if err != nil {
			return nil, fmt.Errorf("descriptor of service %s: %w", svcName, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is not a service", svcName)
		}
		for i := 0; i < sd.Methods().Len(); i++ {
			md := sd.Methods().Get(i)
			opts := md.Options()
			rule := accessRule{
				public:     proto.GetExtension(opts, authv1.E_Public).(bool),
				permission: proto.GetExtension(opts, authv1.E_Permission).(string),
			}
			if rule.public || rule.permission != "" {
				rules["/"+svcName+"/"+string(md.Name())] = rule
			}
		}
	}
	return rules, nil
}

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
	return s.authorizeRoute(ctx, s.routes.byMethod[fullMethod], bearer)
}

// authorizeRoute is authorize for a route already looked up (nil: a method not served).
func (s *Server) authorizeRoute(ctx context.Context, r *route, bearer string) (context.Context, error) {
	if r == nil || !r.ruled {
		return ctx, rpcerr.PermissionDenied("Permission denied.", "This method is not open to clients.")
	}
	rule := r.rule
	if rule.public {
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
	if err := claims.Require(rule.permission); err != nil {
		return ctx, rpcerr.PermissionDenied("Permission denied.",
			fmt.Sprintf("The client lacks the %q permission this endpoint needs.", rule.permission))
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
