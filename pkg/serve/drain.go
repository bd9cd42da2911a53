package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Shutdown without lost requests. After SIGTERM, readiness turns false and for ShutdownDelay the
// service keeps serving while load balancers take it out: new connections are accepted, and every
// HTTP answer says Connection: close, so a keep-alive client learns with its next answer that it
// must dial again, instead of finding its idle connection shut under a request later. Closing idle
// connections at that moment (http.Server.SetKeepAlivesEnabled(false) does) would race requests
// already on their way in them.
//
// Then the HTTP listener stops accepting, taking first what the kernel has already accepted (a
// connection left in the accept queue would be reset under its request); connections whose
// request is on its way get settleDelay to start it; only then does http.Server.Shutdown close
// the idle ones and wait for every request in progress (up to ShutdownGrace). gRPC drains at the
// same time with GracefulStop (GOAWAY: its clients retry elsewhere).

const (
	// acceptDrainWait is how long the listener keeps taking connections the kernel accepted
	// before it closes.
	acceptDrainWait = 20 * time.Millisecond
	// settleDelay lets a request sent just before the listener closed reach its handler (an idle
	// connection with a request in its socket buffer is still "idle" until the server reads it).
	settleDelay = 100 * time.Millisecond
)

// closeWhenDraining makes every HTTP answer close its connection once the drain has begun.
func (s *Server) closeWhenDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// shutdown drains both fronts (above) and returns when every accepted request is answered or the
// grace period is over.
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
	if err := s.http.Shutdown(graceCtx); err != nil {
		s.log.Warn("http shutdown incomplete", "error", err)
		s.http.Close()
	}
	wg.Wait()
	s.log.Info("stopped")
}

// drainListener accepts in its own loop, so that it can stop accepting on its own schedule: it
// takes what the kernel has queued before it closes (stopAccepting), and http.Server.Shutdown's
// Close only ends Serve.
type drainListener struct {
	net.Listener
	conns    chan net.Conn
	loopDone chan struct{} // the accept loop has ended
	closed   chan struct{} // Close was called
	stopping atomic.Bool
	once     sync.Once
}

func newDrainListener(l net.Listener) *drainListener {
	d := &drainListener{Listener: l, conns: make(chan net.Conn), loopDone: make(chan struct{}), closed: make(chan struct{})}
	go d.acceptLoop()
	return d
}

func (d *drainListener) acceptLoop() {
	defer close(d.loopDone)
	var backoff time.Duration
	for {
		c, err := d.Listener.Accept()
		if err != nil {
			if d.stopping.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait and retry, as http.Server does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		select {
		case d.conns <- c:
		case <-d.closed:
			c.Close()
			return
		}
	}
}

// Accept hands over the loop's connections until Close.
func (d *drainListener) Accept() (net.Conn, error) {
	select {
	case c := <-d.conns:
		return c, nil
	case <-d.closed:
		return nil, net.ErrClosed
	}
}

// stopAccepting takes the connections the kernel has accepted (for up to wait), then closes the
// socket: later connections are refused, none is left queued to be reset.
func (d *drainListener) stopAccepting(wait time.Duration) {
	d.stopping.Store(true)
	if dl, ok := d.Listener.(interface{ SetDeadline(time.Time) error }); ok {
		_ = dl.SetDeadline(time.Now().Add(wait))
	} else {
		_ = d.Listener.Close()
	}
	select {
	case <-d.loopDone:
	case <-d.closed:
	}
	_ = d.Listener.Close()
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
