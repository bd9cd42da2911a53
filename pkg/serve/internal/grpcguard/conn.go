package grpcguard

// Connections that abuse the gRPC port are closed. grpc-go bounds the calls a connection keeps
// running, not how fast it opens calls it then resets or that the tap handle refuses, each costing
// header decoding, the tap handle and a handler start: one token holder resetting 59,000 streams
// a second on four connections took the core, and JSON answers waited a second. So a connection
// that resets calls before their message, or has calls refused on their headers, more than
// maxAbusePerSecond times in a second is closed, as Go's own HTTP/2 server closes one that resets
// too many streams; for abuseCooldown after, the same address's new connections are closed as
// accepted, so that dialling again is not the cheap way on. Callers share an address only behind
// a NAT or a proxy, and a proxy ends its clients' HTTP/2 streams itself rather than passing their
// resets on.

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"google.golang.org/grpc/peer"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// A client that means its calls neither resets them nor has them refused.
const (
	maxAbusePerSecond = 200
	abuseCooldown     = time.Second
)

// connWatch knows the gRPC listener's open connections by their remote address (the peer gRPC
// puts in each call's context).
type connWatch struct {
	mu      sync.Mutex
	conns   map[string]*watchedConn
	cooling map[string]time.Time // host -> until when its new connections are closed
	closed  prometheus.Counter
	refused prometheus.Counter
	log     *slog.Logger
	logs    *telemetry.LogLimiter // the close lines are limited like refusals'
	now     func() time.Time
}

func newConnWatch(reg prometheus.Registerer, service string, log *slog.Logger, logs *telemetry.LogLimiter) *connWatch {
	f := promauto.With(reg)
	return &connWatch{
		conns:   map[string]*watchedConn{},
		cooling: map[string]time.Time{},
		closed: f.NewCounter(prometheus.CounterOpts{
			Name:        "yardstick_grpc_connections_closed_total",
			Help:        "gRPC connections closed for resetting calls before their message, or having calls refused on their headers, more than 200 times in a second.",
			ConstLabels: prometheus.Labels{"service": service},
		}),
		refused: f.NewCounter(prometheus.CounterOpts{
			Name:        "yardstick_grpc_connections_refused_total",
			Help:        "gRPC connections closed as they were accepted: their address had a connection closed for abuse within the last second.",
			ConstLabels: prometheus.Labels{"service": service},
		}),
		log:  log,
		logs: logs,
		now:  time.Now,
	}
}

// watchedConn is one accepted connection and its abuse in the current second.
type watchedConn struct {
	net.Conn
	w      *connWatch
	key    string
	window time.Time
	events int
	once   sync.Once
}

// forget takes c out of the watch, once, whoever gets there first; cool then has its address's
// new connections closed for abuseCooldown. It reports whether this call took it out.
func (c *watchedConn) forget(cool bool) (first bool) {
	c.once.Do(func() {
		first = true
		c.w.mu.Lock()
		if c.w.conns[c.key] == c {
			delete(c.w.conns, c.key)
		}
		if cool {
			c.w.cooling[hostOf(c.key)] = c.w.now().Add(abuseCooldown)
		}
		c.w.mu.Unlock()
	})
	return first
}

func (c *watchedConn) Close() error {
	c.forget(false)
	return c.Conn.Close()
}

type watchListener struct {
	net.Listener
	w *connWatch
}

func (l watchListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := conn.RemoteAddr().String()
		l.w.mu.Lock()
		if until, cooling := l.w.cooling[hostOf(key)]; cooling && l.w.now().After(until) {
			delete(l.w.cooling, hostOf(key))
		} else if cooling {
			l.w.mu.Unlock()
			l.w.refused.Inc()
			_ = conn.Close()
			continue
		}
		c := &watchedConn{Conn: conn, w: l.w, key: key}
		l.w.conns[key] = c
		l.w.mu.Unlock()
		return c, nil
	}
}

func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// abused counts one abuse on the connection of ctx's call, and closes it past maxAbusePerSecond.
func (w *connWatch) abused(ctx context.Context) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return
	}
	key, now := p.Addr.String(), w.now()
	w.mu.Lock()
	c := w.conns[key]
	if c == nil {
		w.mu.Unlock()
		return
	}
	if now.Sub(c.window) >= time.Second {
		c.window, c.events = now, 0
	}
	c.events++
	over := c.events > maxAbusePerSecond
	w.mu.Unlock()
	if over {
		c.closeForAbuse()
	}
}

func (c *watchedConn) closeForAbuse() {
	if !c.forget(true) {
		return
	}
	c.w.closed.Inc()
	if ok, dropped := c.w.logs.Allow("grpc", "connection closed"); ok {
		c.w.log.Warn("grpc connection closed: too many calls reset before their message or refused on their headers",
			"remote", c.key, "per_second", maxAbusePerSecond, "suppressed", dropped)
	}
	_ = c.Conn.Close()
}
