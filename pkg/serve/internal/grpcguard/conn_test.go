package grpcguard

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
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

// TestAbusiveConnectionClosed: a connection that has more than 200 calls refused on their
// headers in a second is closed (counted, logged); at 200 it is not. Another connection is
// untouched.
func TestAbusiveConnectionClosed(t *testing.T) {
	t.Parallel()
	// 200 a second: grpcguard's TestTransportLimits.
	// The clock stands still: every refusal falls in the same second, however slow the machine.
	t0 := time.Unix(1000, 0)
	h := startGuard(t, func(g *Guard) { g.watch.now = func() time.Time { return t0 } })
	closed := func() float64 { return h.metric("yardstick_grpc_connections_closed_total") }
	refuse := func(score scoringv1.ScoringServiceClient, n int) (refused int, other error) {
		for range n {
			_, err := score.ScoreItemResults(context.Background(), scoreOfSize(t, 100))
			if status.Code(err) != codes.Unauthenticated {
				return refused, err
			}
			refused++
		}
		return refused, nil
	}
	// 200 refusals: the connection stays (the last one is still answered by the server).
	polite := scoringv1.NewScoringServiceClient(h.dial(t))
	if n, err := refuse(polite, 200); n != 200 || closed() != 0 {
		t.Fatalf("200 refusals: got %d refused (then %v), %v connections closed; want 200, none closed", n, err, closed())
	}
	// One more within the second closes it: that call, or the next, finds the connection gone.
	abusive := scoringv1.NewScoringServiceClient(h.dial(t))
	_, _ = refuse(abusive, 201)
	waitFor(t, "the abusive connection closed", func() bool { return closed() == 1 })
	if !h.loggedMsg("grpc connection closed") {
		t.Errorf("no log line for the closed connection:\n%s", h.logs)
	}
	authed := bearer("Bearer " + h.token)
	if _, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) == codes.Unavailable || status.Code(err) == codes.Unauthenticated {
		t.Errorf("a call on a connection opened before: %v", err)
	}
	// For a second the address's new connections are closed as they are accepted (the clock stands
	// still here, so the second never ends).
	if _, err := scoringv1.NewScoringServiceClient(h.dial(t)).ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) != codes.Unavailable {
		t.Errorf("a new connection from the address during the cooldown: got %v; want Unavailable", err)
	}
	if got := h.metric("yardstick_grpc_connections_refused_total"); got < 1 {
		t.Errorf("yardstick_grpc_connections_refused_total: got %v; want at least 1", got)
	}
}

// TestThrottledConnectionStays: the gate refuses a client over its rate on the call's headers,
// before its message is read, and such refusals of an authenticated caller do not count against
// its connection as the refusals of credentials do (more than 200 in a second close it:
// TestAbusiveConnectionClosed): 250 calls refused for the rate, sent at once, leave the
// connection open.
func TestThrottledConnectionStays(t *testing.T) {
	t.Parallel()
	h := startGuard(t, func(g *Guard) {
		// One call every 100 s: however slow the machine, none of the 250 is let in.
		limits, err := quota.New(quota.Config{Service: "forecast", Rate: 0.01, Burst: 1})
		if err == nil {
			err = limits.Register(g.Telemetry.Registry())
		}
		if err != nil {
			t.Fatal(err)
		}
		g.Gate.Limits = limits
	})
	score := scoringv1.NewScoringServiceClient(h.conn)
	authed := bearer("Bearer " + h.token)
	if _, err := score.ScoreItemResults(authed, scoreOfSize(t, 100)); err != nil {
		t.Fatalf("first call: got %v; want OK (the burst)", err)
	}
	// Ten senders, so that the refusals fall within a second of each other.
	codesSeen := make(chan codes.Code, 250)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 25 {
				_, err := score.ScoreItemResults(authed, scoreOfSize(t, 100))
				codesSeen <- status.Code(err)
			}
		})
	}
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.ResourceExhausted {
			t.Fatalf("a call over the rate: got %v; want RESOURCE_EXHAUSTED", c)
		}
	}
	if got := h.metric("yardstick_grpc_connections_closed_total"); got != 0 {
		t.Errorf("yardstick_grpc_connections_closed_total: got %v; want 0", got)
	}
	// The dev client is not in the limiter's clients: counted as "other".
	if got := h.series("yardstick_client_throttled_total", map[string]string{"client": "other", "reason": "rate"}); got != 250 {
		t.Errorf("yardstick_client_throttled_total{client=other,reason=rate}: got %v; want 250", got)
	}
}
