package authz

import (
	"context"
	"net/netip"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
)

// callerAddress is the caller's address for the login throttle, on either front.
func callerAddress(ctx context.Context, trusted []netip.Prefix) string {
	if ri := reqinfo.From(ctx); ri != nil && ri.HTTPRequest != nil {
		return clientOf(ri.HTTPRequest.Header.Values("X-Forwarded-For"), ri.HTTPRequest.RemoteAddr, trusted)
	}
	addr := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr = p.Addr.String()
	}
	return clientOf(metadata.ValueFromIncomingContext(ctx, "x-forwarded-for"), addr, trusted)
}

// clientOf walks a forwarding chain (the X-Forwarded-For values, then the connection's address
// peer, "" when unknown) from the right and returns the first address that is not a trusted
// proxy: everything to its left was written by the client and may be forged. Ports are dropped.
func clientOf(forwarded []string, peer string, trusted []netip.Prefix) string {
	var chain []string
	for _, v := range forwarded {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				chain = append(chain, h)
			}
		}
	}
	if peer != "" {
		chain = append(chain, peer)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		addr, ok := parseHop(chain[i])
		if !ok {
			return chain[i]
		}
		if i == 0 || !slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(addr) }) {
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
