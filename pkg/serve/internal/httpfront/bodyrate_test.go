package httpfront

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pacedServer serves PaceBodies(grace, rate) around a handler that reads the whole body and
// answers 200 with its length, or 408 when the pacing cut it (as the front does).
func pacedServer(t *testing.T, grace time.Duration, rate int64) string {
	t.Helper()
	srv := httptest.NewServer(PaceBodies(grace, rate, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		switch {
		case errors.Is(err, errSlowBody):
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestTimeout)
		case err != nil:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			_, _ = io.WriteString(w, strconv.FormatInt(n, 10))
		}
	})))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// slowAnswer is what slowPost saw: the answer, when it came (from the end of the headers) and
// whether the server closed the connection after it.
type slowAnswer struct {
	status int
	body   string
	close  bool // the answer said Connection: close
	took   time.Duration
	closed bool
}

// slowPost writes a POST of body to path at addr in chunks of chunk bytes every interval, reading
// the answer meanwhile; auth is its Authorization ("": none).
func slowPost(t *testing.T, addr, path, auth string, body []byte, chunk int, interval time.Duration) slowAnswer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, len(body))
	if auth != "" {
		head += "Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		// Chunk k goes out at start + k×interval, not interval after the last one: a late chunk
		// is caught up, so that the average rate, which the server measures, is the one asked for.
		for i, k := 0, 0; i < len(body); i, k = i+chunk, k+1 {
			if _, err := c.Write(body[i:min(i+chunk, len(body))]); err != nil {
				return // the server answered and closed
			}
			time.Sleep(time.Until(start.Add(time.Duration(k+1) * interval)))
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	a := slowAnswer{status: resp.StatusCode, close: resp.Close, took: time.Since(start)}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.body = string(b)
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = br.ReadByte() // the server closes after the answer, or waits for the next request
	var ne net.Error
	a.closed = err != nil && !(errors.As(err, &ne) && ne.Timeout()) // EOF, or a reset if it was still writing
	return a
}

// TestPaceBodies: with a grace of 200 ms and a minimum of 2,000 bytes/s, a 2,000-byte body sent
// at twice the rate is read whole; one sent at half the rate is cut (errSlowBody) long before it
// would have ended, about when it fell behind: grace, then behind the rate.
func TestPaceBodies(t *testing.T) {
	t.Parallel()
	addr := pacedServer(t, 200*time.Millisecond, 2000)
	for _, tc := range []struct {
		name          string
		chunk         int
		interval      time.Duration
		status        int
		body          string
		after, before time.Duration // when the answer came
	}{
		{"twice the minimum rate", 200, 50 * time.Millisecond, http.StatusOK, "2000", 400 * time.Millisecond, 5 * time.Second}, // 0.5 s
		{"half the minimum rate", 100, 100 * time.Millisecond, http.StatusRequestTimeout, "", 0, 1500 * time.Millisecond},      // would take 2 s
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := slowPost(t, addr, "/", "", bytes.Repeat([]byte("x"), 2000), tc.chunk, tc.interval)
			if a.status != tc.status || a.body != tc.body {
				t.Errorf("got %d %q; want %d %q", a.status, a.body, tc.status, tc.body)
			}
			if a.took < tc.after || a.took > tc.before {
				t.Errorf("answered after %s; want between %s and %s", a.took, tc.after, tc.before)
			}
		})
	}
}

// paddedBody is a valid body of the test service's Echo, of n bytes.
func paddedBody(n int) []byte {
	b := []byte(`{"text":"L1","items":[{"id":"L1","result":1}]`)
	return append(append(b, bytes.Repeat([]byte(" "), n-len(b)-1)...), '}')
}

// TestBodyRate: the front behind PaceBodies, with a grace of 200 ms and a minimum of 2,000
// bytes/s: a 2,000-byte body sent at twice the rate is answered 200 and the connection kept; one
// sent at half the rate is cut with 408 long before it would have ended, Connection: close and
// closed; a caller without a token is answered 401 at once, before the grace, and the connection
// closes (its body is not waited for).
func TestBodyRate(t *testing.T) {
	t.Parallel()
	s := startFront(t, 200*time.Millisecond, 2000)
	auth := s.bearer(t, "caller")
	body := paddedBody(2000)
	for _, tc := range []struct {
		name, auth    string
		chunk         int
		interval      time.Duration
		status        int
		after, before time.Duration // when the answer came
		close, closed bool          // want Connection: close (false: either), and the connection closed after the answer
	}{
		{"twice the minimum rate passes", auth, 200, 50 * time.Millisecond, http.StatusOK, 400 * time.Millisecond, 10 * time.Second, false, false}, // 4,000 B/s: 0.5 s
		{"half the minimum rate is cut", auth, 100, 100 * time.Millisecond, http.StatusRequestTimeout, 0, 1500 * time.Millisecond, true, true},     // 1,000 B/s: would take 2 s
		{"no token is not waited for", "", 10, time.Second, http.StatusUnauthorized, 0, 150 * time.Millisecond, true, true},                        // 10 B/s; before the 200 ms grace
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := slowPost(t, s.addr, echoPath, tc.auth, body, tc.chunk, tc.interval)
			if a.status != tc.status {
				t.Errorf("status: got %d %s; want %d", a.status, a.body, tc.status)
			}
			if a.took < tc.after || a.took > tc.before {
				t.Errorf("answered after %s; want between %s and %s", a.took, tc.after, tc.before)
			}
			if a.closed != tc.closed || (tc.close && !a.close) {
				t.Errorf("connection after %d: closed %v, Connection: close %v; want closed %v, Connection: close %v", a.status, a.closed, a.close, tc.closed, tc.close)
			}
		})
	}
}
