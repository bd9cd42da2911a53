package serve

import (
	"context"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

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

// accessRules reads the access rule of every method registered on srv from the method options
// (yardstick.auth.v1.public / permission). A method of ours with neither option gets no rule and is
// refused: a forgotten option fails closed.
func accessRules(srv *grpc.Server) (map[string]accessRule, error) {
	rules := map[string]accessRule{}
	for svcName, info := range srv.GetServiceInfo() {
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

// authorize checks the bearer token of a call against the method's rule and returns the context
// the handler runs with.
func (s *Server) authorize(ctx context.Context, fullMethod string) (context.Context, error) {
	rule, ok := s.rules[fullMethod]
	if !ok {
		return ctx, PermissionDenied("Permission denied.", "This method is not open to clients.")
	}
	if rule.public {
		return ctx, nil
	}
	raw := bearerToken(ctx)
	if raw == "" {
		return ctx, NotAuthenticated("Authentication failed.",
			"Missing bearer token: send 'Authorization: Bearer <accessToken>' with a token from POST /authToken.")
	}
	claims, err := s.issuer.Verify(raw, s.cfg.Service)
	if err != nil {
		s.log.DebugContext(ctx, "token rejected", "reason", err.Error(), "request_id", RequestID(ctx))
		return ctx, NotAuthenticated("Authentication failed.",
			fmt.Sprintf("The token is invalid, expired or not for the %s service; get a new one from POST /authToken.", s.cfg.Service))
	}
	noteClient(ctx, claims.ClientID)
	if err := claims.Require(rule.permission); err != nil {
		return ctx, PermissionDenied("Permission denied.",
			fmt.Sprintf("The client lacks the %q permission this endpoint needs.", rule.permission))
	}
	return context.WithValue(ctx, claimsKey{}, claims), nil
}

func bearerToken(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return ""
}

// fromGateway reports whether the call came from this process's JSON front.
func fromGateway(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	return ok && p.Addr != nil && p.Addr.Network() == inprocNetwork
}

// remoteAddress is the caller's address for throttling. The chain is the X-Forwarded-For
// addresses followed by the connection's peer (the JSON front passes its HTTP client's address as
// the last x-forwarded-for entry; direct gRPC callers add their connection's address). Each of the
// trustedProxies in front appended one entry, so the caller is that many hops from the right:
// anything further left was written by the client and may be forged.
func remoteAddress(ctx context.Context, trustedProxies int) string {
	md, _ := metadata.FromIncomingContext(ctx)
	var chain []string
	if trustedProxies > 0 || fromGateway(ctx) {
		for _, v := range md.Get("x-forwarded-for") {
			for _, h := range strings.Split(v, ",") {
				if h = strings.TrimSpace(h); h != "" {
					chain = append(chain, h)
				}
			}
		}
	}
	if !fromGateway(ctx) {
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			addr := p.Addr.String()
			if host, _, err := net.SplitHostPort(addr); err == nil {
				addr = host
			}
			chain = append(chain, addr)
		}
	}
	if len(chain) == 0 {
		return "unknown"
	}
	i := len(chain) - 1 - trustedProxies
	if i < 0 {
		i = 0
	}
	return chain[i]
}
