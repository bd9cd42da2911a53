package grpcguard

// Connections that abuse the gRPC port are closed. grpc-go bounds what a connection keeps
// running (MaxConcurrentStreams), but not how fast it opens calls it then resets, or calls the tap
// handle refuses: each still costs header decoding, the tap handle and a handler start. One token
// holder resetting streams on four connections, 59,000 a second, took the core, and JSON answers
// of the same pod waited a second. So a connection that resets calls before sending their message,
// or has calls refused on their headers, more than maxAbusePerSecond times in a second is closed:
// to go on, the caller must dial again, and its new connection is watched the same way. Go's own
// HTTP/2 server does the same to a client that resets too many streams. For abuseCooldown after
// that, the same address's new connections are closed as they are accepted, before a byte of
// HTTP/2: dialling again must not be the cheap way on. Callers share an address only behind a
// NAT or a proxy, and a proxy (an ingress) ends its clients' HTTP/2 streams itself rather than
// passing their resets on.

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

// The limits the comment above names. A client that means its calls neither resets them nor has
// them refused: it sends the message it opened a call for, with the token it was given.
const (
	maxAbusePerSecond = 200
	abuseCooldown     = time.Second
)

// connWatch knows the gRPC listener's open connections by their remote address (the peer gRPC
// puts in each call's context), to close one that abuses the server.
type connWatch struct {
	mu      sync.Mutex
	conns   map[string]*watchedConn
	cooling map[string]time.Time // host -> until when its new connections are closed
	closed  prometheus.Counter
	refused prometheus.Counter
	log     *slog.Logger
	logs    *telemetry.LogLimiter // the close lines are limited like refusals' (telemetry.LogLimiter)
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

// watchedConn is one accepted connection and its count of abuse in the current second.
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

// watchListener is a listener whose connections w knows.
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

// hostOf is the host of a host:port address.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// abused counts one abuse on the connection of the call ctx belongs to, and closes the connection
// once it has abused more than maxAbusePerSecond times in a second.
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
