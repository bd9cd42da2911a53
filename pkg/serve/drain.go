package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Shutdown without lost requests, in the order shutdown takes its steps:
//  1. Readiness turns false and for ShutdownDelay the service keeps serving while load balancers
//     take it out; every HTTP answer says Connection: close, so a keep-alive client dials again.
//     Closing idle connections instead (SetKeepAlivesEnabled(false)) would race requests in them.
//  2. The HTTP listener stops accepting, taking first what the kernel has already accepted (a
//     connection left in the queue would be reset under its request), and on Linux plugging the
//     queue so that none slips in before the close (narrowBacklog, plugQueue).
//  3. Requests on their way get settleDelay to start, and a connection not yet answered once is
//     waited for, up to firstRequestWait: net/http drops unanswered a request it reads once
//     Shutdown has begun (the client sees EOF and does not retry), and a connection opened during
//     the delay may send its first request late. Its first answer shows net/http has passed that
//     check; one that has sent nothing by the bound is closed.
//  4. http.Server.Shutdown closes the idle connections and waits for the requests in progress, up
//     to ShutdownGrace, which bounds the waits before too.
//
// gRPC drains meanwhile with GracefulStop (GOAWAY: its clients retry elsewhere).

const (
	// acceptDrainWait is how long the listener takes what the kernel accepted before it closes.
	acceptDrainWait = 20 * time.Millisecond
	// settleDelay lets a request sent just before the listener closed reach its handler (an idle
	// connection with a request in its socket buffer is still "idle" until the server reads it).
	settleDelay = 100 * time.Millisecond
	// firstRequestWait: a client dials just before it sends; one silent this long is not about to.
	firstRequestWait = 2 * time.Second
	// plugTries and plugWait bound plugQueue: a loopback connect that waits had its SYN dropped.
	plugTries = 20
	plugWait  = 50 * time.Millisecond
)

// closeWhenDraining is step 1's Connection: close.
func (s *Server) closeWhenDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// shutdown drains both fronts, step by step (above).
func (s *Server) shutdown(httpLis *drainListener) {
	s.ready.Store(false)
	s.draining.Store(true)
	s.health.Shutdown() // every service reports NOT_SERVING
	time.Sleep(s.cfg.ShutdownDelay)

	graceCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		stopped := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-graceCtx.Done():
			s.log.Warn("grpc drain exceeded the grace period; stopping")
			s.grpc.Stop()
			<-stopped
		}
	})
	httpLis.stopAccepting(acceptDrainWait)
	select {
	case <-time.After(settleDelay):
	case <-graceCtx.Done():
	}
	if silent := httpLis.awaitFirstAnswers(graceCtx, firstRequestWait); silent > 0 {
		s.log.Info("drain: closed connections that sent no request", "connections", silent)
	}
	if err := s.http.Shutdown(graceCtx); err != nil {
		s.log.Warn("http shutdown incomplete", "error", err)
		s.http.Close()
	}
	wg.Wait()
	s.log.Info("stopped")
}

// drainListener lets http.Server accept until the stop, then stops on its own schedule (step 2;
// Shutdown's Close only ends Serve), and wraps its connections (drainConn) to know which are
// unanswered (step 3).
type drainListener struct {
	net.Listener
	stopping   atomic.Bool
	acceptDone chan struct{} // Accept has met the stop: the socket is stopAccepting's
	doneOnce   sync.Once
	late       chan net.Conn // what plugQueue took off the queue, for Accept
	closed     chan struct{} // Close was called
	once       sync.Once

	mu         sync.Mutex
	unanswered map[*drainConn]struct{} // nothing written to them yet
	answered   chan struct{}           // one left unanswered (capacity 1: a wake-up)
}

func newDrainListener(l net.Listener) *drainListener {
	return &drainListener{Listener: l, acceptDone: make(chan struct{}), late: make(chan net.Conn), closed: make(chan struct{}),
		unanswered: map[*drainConn]struct{}{}, answered: make(chan struct{}, 1)}
}

// Accept takes the socket's connections until it meets the stop, then hands over plugQueue's
// until Close. Its other errors (out of file descriptors and the like) http.Server retries.
func (d *drainListener) Accept() (net.Conn, error) {
	select {
	case <-d.acceptDone: // the socket is stopAccepting's: one Accept on it at a time
	default:
		c, err := d.Listener.Accept()
		if err == nil {
			return d.track(c), nil
		}
		if !d.stopping.Load() {
			return nil, err
		}
		d.doneOnce.Do(func() { close(d.acceptDone) })
	}
	select {
	case c := <-d.late:
		return c, nil
	case <-d.closed:
		return nil, net.ErrClosed
	}
}

// track counts c as unanswered before it is handed out: once Accept has met the stop, every
// connection is counted.
func (d *drainListener) track(c net.Conn) *drainConn {
	dc := &drainConn{Conn: c, d: d}
	d.mu.Lock()
	d.unanswered[dc] = struct{}{}
	d.mu.Unlock()
	return dc
}

// handOver gives c to Accept; false: the listener was closed (and c with it).
func (d *drainListener) handOver(c net.Conn) bool {
	dc := d.track(c)
	select {
	case d.late <- dc:
		return true
	case <-d.closed:
		dc.Close()
		return false
	}
}

// stopAccepting is step 2: what the kernel has accepted taken for up to wait, then the close.
func (d *drainListener) stopAccepting(wait time.Duration) {
	d.stopping.Store(true)
	narrowed := narrowBacklog(d.Listener) // one place in the accept queue (drain_linux.go)
	dl, ok := d.Listener.(interface{ SetDeadline(time.Time) error })
	if ok {
		_ = dl.SetDeadline(time.Now().Add(wait))
	} else {
		_ = d.Listener.Close()
	}
	select {
	case <-d.acceptDone:
	case <-d.closed:
	}
	if narrowed && ok {
		if plug := d.plugQueue(dl); plug != nil {
			defer plug.Close()
		}
	}
	_ = d.Listener.Close()
}

// plugQueue fills the accept queue's one place (narrowBacklog) with a connection of its own, so
// that the close resets only it; a client's found there first is handed over. nil: not taken.
func (d *drainListener) plugQueue(dl interface{ SetDeadline(time.Time) error }) net.Conn {
	addr := dialable(d.Listener.Addr())
	if addr == "" {
		return nil
	}
	for range plugTries {
		if c, err := net.DialTimeout("tcp", addr, plugWait); err == nil {
			return c
		}
		_ = dl.SetDeadline(time.Now().Add(plugWait))
		if c, err := d.Listener.Accept(); err == nil && !d.handOver(c) {
			return nil
		}
	}
	return nil
}

// dialable is the address a connection of the listener's own dials: its own, with the loopback
// address of its family when it listens on every address.
func dialable(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return ""
	}
	ip := ta.IP
	switch {
	case ip == nil || ip.Equal(net.IPv4zero):
		ip = net.IPv4(127, 0, 0, 1)
	case ip.Equal(net.IPv6unspecified):
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}

// Close ends Accept (http.Server.Shutdown calls it) and closes the socket, unless stopAccepting
// has: Shutdown reports a second close's "use of closed network connection" as its own failure.
func (d *drainListener) Close() error {
	d.once.Do(func() {
		d.stopping.Store(true)
		close(d.closed)
	})
	if err := d.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// awaitFirstAnswers is step 3's wait, for at most bound: it closes the connections that sent
// nothing and counts them (one that sent part of a request is left to Shutdown).
func (d *drainListener) awaitFirstAnswers(ctx context.Context, bound time.Duration) (silent int) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var quiet []*drainConn
	for {
		d.mu.Lock()
		if len(d.unanswered) == 0 || ctx.Err() != nil {
			for dc := range d.unanswered {
				if !dc.heard.Load() {
					quiet = append(quiet, dc)
				}
			}
			d.mu.Unlock()
			break
		}
		d.mu.Unlock()
		select {
		case <-d.answered:
		case <-ctx.Done():
		}
	}
	for _, dc := range quiet {
		_ = dc.Close() // net/http's read fails and it ends the connection
	}
	return len(quiet)
}

// drainConn tells its listener when it is first written to or closed (net/http writes nothing
// before its check for a Shutdown in progress), and writes net/http's plain 431 as JSON.
type drainConn struct {
	net.Conn
	d     *drainListener
	heard atomic.Bool // something was read from it
	done  atomic.Bool // written to or closed: no longer counted
}

func (c *drainConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

func (c *drainConn) Write(p []byte) (int, error) {
	c.forget()
	if string(p) == plainTooLarge { // net/http's own 431 (below): the documented body instead
		if _, err := c.Conn.Write(jsonTooLarge); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *drainConn) Close() error {
	c.forget()
	return c.Conn.Close()
}

// CloseWrite keeps net/http's half-close before it hangs up on a refused request.
func (c *drainConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *drainConn) forget() {
	if c.done.Load() || c.done.Swap(true) {
		return
	}
	c.d.mu.Lock()
	delete(c.d.unanswered, c)
	c.d.mu.Unlock()
	select {
	case c.d.answered <- struct{}{}:
	default:
	}
}

// plainTooLarge is net/http's own answer to a header over MaxHeaderBytes, byte for byte
// (net/http/server.go, conn.serve), in plain text before any handler: drainConn writes the JSON
// body instead. A Go release that words it otherwise sends its own (TestHeaderTooLargeIsJSON).
const plainTooLarge = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"

var jsonTooLarge = func() []byte {
	body := rpcerr.JSON(rpcerr.ErrorBody{
		Message: "Request header fields too large.", ExceptionType: rpcerr.ExceptionTooLarge,
		AdditionalInfo: "The request's header exceeds the size limit (64 KiB).",
	})
	return []byte("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n" +
		"X-Content-Type-Options: nosniff\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + string(body))
}()
