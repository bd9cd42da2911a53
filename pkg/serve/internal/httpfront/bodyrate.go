package httpfront

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Request bodies are paced instead of timed as a whole: a fixed ReadTimeout either cuts a 16 MiB
// group upload on a slow link or lets a caller hold a connection for minutes with a byte now and
// then. By time t after the headers a body must have sent (t - grace) × rate bytes (defaults 10 s,
// 64 KiB/s: a 16 MiB body may take 4 min 26 s); one that falls behind is cut with 408 and its
// connection closed. The connection's read deadline moves as bytes arrive: no goroutine or timer
// per request.

// errSlowBody is the error a paced body returns when it fell behind the minimum rate.
var errSlowBody = errors.New("request body arrived slower than the minimum rate")

// PaceBodies paces the body of every request that has one: grace to start, then rate bytes a
// second on average (Config.BodyGrace, Config.MinBodyRate). In-process calls are not paced.
func PaceBodies(grace time.Duration, rate int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			start := time.Now()
			if rc.SetReadDeadline(start.Add(grace)) == nil {
				r.Body = &pacedBody{ReadCloser: r.Body, rc: rc, start: start, grace: grace, rate: rate}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// pacedBody moves the connection's read deadline to start + grace + read/rate as bytes arrive,
// and lifts it at the end of the body: the handler's own work is not bounded by it.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	rate  int64
	read  int64
	done  bool
}

func (p *pacedBody) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	p.read += int64(n)
	switch {
	case err == io.EOF && !p.done:
		p.done = true
		_ = p.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, fmt.Errorf("%w: %d bytes in %s (grace %s, then %d bytes/s): %w",
			errSlowBody, p.read, time.Since(p.start).Round(time.Millisecond), p.grace, p.rate, err)
	case n > 0:
		_ = p.rc.SetReadDeadline(p.start.Add(p.grace + time.Duration(float64(p.read)/float64(p.rate)*float64(time.Second))))
	}
	return n, err
}

// dropLinger is how long a connection refused before its body was read stays open after the
// answer: closed with the body still arriving, it resets, destroying the answer still unread.
const dropLinger = 100 * time.Millisecond

// dropBody is for answers given without reading the body: the connection closes dropLinger after
// the answer, instead of net/http reading up to 256 KiB of the rest at the caller's pace.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(dropLinger))
}

// refuse answers e without reading the body (dropBody).
func refuse(w http.ResponseWriter, r *http.Request, e rpcerr.HTTP) {
	dropBody(w, r)
	rpcerr.Write(w, e)
}
