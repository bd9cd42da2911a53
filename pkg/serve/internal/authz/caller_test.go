package authz

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
)

func TestClientOf(t *testing.T) {
	t.Parallel()
	ingress := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
	for _, tc := range []struct {
		name    string
		chain   []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxies: the connection", []string{"6.6.6.6", "192.0.2.7:5000"}, nil, "192.0.2.7"},
		{"through the ingress: what it appended", []string{"6.6.6.6", "203.0.113.5", "10.1.2.3:40000"}, ingress, "203.0.113.5"},
		{"two trusted hops", []string{"6.6.6.6", "203.0.113.5", "10.1.9.9", "10.1.2.3:1"}, ingress, "203.0.113.5"},
		{"bypassing the ingress: its own address", []string{"6.6.6.6", "10.2.0.4:1"}, ingress, "10.2.0.4"},
		{"everything trusted: the leftmost", []string{"10.1.0.1", "10.1.0.2:1"}, ingress, "10.1.0.1"},
		{"IPv6 with port", []string{"[2001:db8::1]:443"}, nil, "2001:db8::1"},
		{"IPv4-mapped IPv6 is IPv4", []string{"[::ffff:192.0.2.9]:1"}, nil, "192.0.2.9"},
		{"empty chain", nil, nil, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := clientOf(tc.chain, "", tc.trusted); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestCallerAddress(t *testing.T) {
	t.Parallel()
	direct := &net.TCPAddr{IP: net.ParseIP("10.0.0.9"), Port: 5555}
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}
	for _, tc := range []struct {
		name    string
		addr    net.Addr
		md      metadata.MD
		trusted []netip.Prefix
		want    string
	}{
		{"direct gRPC caller", direct, nil, nil, "10.0.0.9"},
		{"direct caller's own header is ignored", direct, metadata.Pairs("x-forwarded-for", "1.2.3.4"), nil, "10.0.0.9"},
		{"direct caller that is a trusted proxy", direct, metadata.Pairs("x-forwarded-for", "6.6.6.6, 203.0.113.5"), proxy, "203.0.113.5"},
		{"JSON front: the address it computed, not the forwarded header", nil, metadata.Pairs("x-forwarded-for", "6.6.6.6"), nil, "192.0.2.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tc.addr})
			if tc.addr == nil {
				req := httptest.NewRequest(http.MethodPost, "/", nil)
				req.RemoteAddr = "192.0.2.7:4242"
				req.Header.Set("X-Forwarded-For", "6.6.6.6")
				ctx = reqinfo.With(context.Background(), &reqinfo.Info{HTTPRequest: req})
			}
			if tc.md != nil {
				ctx = metadata.NewIncomingContext(ctx, tc.md)
			}
			if got := callerAddress(ctx, tc.trusted); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}
