package serve

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

type inprocAddr struct{}

func (inprocAddr) Network() string { return inprocNetwork }
func (inprocAddr) String() string  { return "bufconn" }

func TestRemoteAddress(t *testing.T) {
	t.Parallel()
	direct := &net.TCPAddr{IP: net.ParseIP("10.0.0.9"), Port: 5555}
	for _, tc := range []struct {
		name    string
		addr    net.Addr
		xff     string
		proxies int
		want    string
	}{
		{"direct gRPC caller", direct, "", 0, "10.0.0.9"},
		{"direct caller's own header is ignored", direct, "1.2.3.4", 0, "10.0.0.9"},
		{"JSON front: the HTTP peer it saw", inprocAddr{}, "192.0.2.7", 0, "192.0.2.7"},
		{"JSON front: a forged header does not win", inprocAddr{}, "6.6.6.6, 192.0.2.7", 0, "192.0.2.7"},
		{"behind one proxy: what the proxy appended", inprocAddr{}, "6.6.6.6, 203.0.113.5, 10.1.1.1", 1, "203.0.113.5"},
		{"behind two proxies", inprocAddr{}, "6.6.6.6, 203.0.113.5, 10.2.2.2, 10.1.1.1", 2, "203.0.113.5"},
		{"more proxies than hops", inprocAddr{}, "192.0.2.7", 3, "192.0.2.7"},
		{"direct caller behind a proxy", direct, "203.0.113.5", 1, "203.0.113.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tc.addr})
			if tc.xff != "" {
				ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("x-forwarded-for", tc.xff))
			}
			if got := remoteAddress(ctx, tc.proxies); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}
