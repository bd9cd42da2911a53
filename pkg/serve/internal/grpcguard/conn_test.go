package grpcguard

import (
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// loopback is a listener on a free loopback port, closed at the end of the test.
func loopback(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis
}

// TestConnWatchCooldown: an address cools down for 1 s after an abusive close; then its new
// connections are taken again.
func TestConnWatchCooldown(t *testing.T) {
	t.Parallel()
	var now atomic.Int64 // the clock, in nanoseconds: Accept reads it on its own goroutine
	now.Store(time.Unix(1000, 0).UnixNano())
	advance := func(d time.Duration) { now.Add(int64(d)) }
	w := newConnWatch(prometheus.NewRegistry(), "scoring", slog.New(slog.DiscardHandler), telemetry.NewLogLimiter(prometheus.NewRegistry(), "scoring"))
	w.now = func() time.Time { return time.Unix(0, now.Load()) }
	lis := loopback(t)
	wl := watchListener{Listener: lis, w: w}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := wl.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// dialAccept dials and returns what Accept handed over, nil if the connection was closed at
	// once (Accept goes on waiting).
	dialAccept := func() (net.Conn, error) {
		d, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		select {
		case c := <-accepted:
			return c, nil
		case <-time.After(time.Second):
			return nil, nil
		}
	}
	c, err := dialAccept()
	if c == nil || err != nil {
		t.Fatalf("first connection: %v, %v", c, err)
	}
	c.(*watchedConn).closeForAbuse()
	advance(999 * time.Millisecond)
	if c, _ := dialAccept(); c != nil {
		t.Errorf("999 ms after the close: a connection was accepted; want it closed at once")
	}
	advance(2 * time.Millisecond)
	if c, _ := dialAccept(); c == nil {
		t.Errorf("1.001 s after the close: no connection accepted; want it taken again")
	}
}
