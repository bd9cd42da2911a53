package httpfront

import (
	"bufio"
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

// slowPost writes a POST of n bytes to addr in chunks of chunk bytes every interval, reading the
// answer meanwhile; it returns the answer's status and body, and when it came (from the end of
// the headers).
func slowPost(t *testing.T, addr string, n, chunk int, interval time.Duration) (int, string, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", n); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		// Chunk k goes out at start + k×interval, not interval after the last one: a late chunk
		// is caught up, so that the average rate, which the server measures, is the one asked for.
		for sent, k := 0, 0; sent < n; sent, k = sent+chunk, k+1 {
			if _, err := c.Write([]byte(strings.Repeat("x", min(chunk, n-sent)))); err != nil {
				return // the server answered and closed
			}
			time.Sleep(time.Until(start.Add(time.Duration(k+1) * interval)))
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	took := time.Since(start)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), took
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
			status, body, took := slowPost(t, addr, 2000, tc.chunk, tc.interval)
			if status != tc.status || body != tc.body {
				t.Errorf("got %d %q; want %d %q", status, body, tc.status, tc.body)
			}
			if took < tc.after || took > tc.before {
				t.Errorf("answered after %s; want between %s and %s", took, tc.after, tc.before)
			}
		})
	}
}
