package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// slowPost writes a POST of body to addr in chunks of chunk bytes every interval, reading the
// answer meanwhile. It returns the answer, when it came (from the end of the headers) and whether
// the server closed the connection after it.
func slowPost(t *testing.T, addr, auth string, body []byte, chunk int, interval time.Duration) (*http.Response, time.Duration, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", throwawayPath, len(body))
	if auth != "" {
		head += "Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		// Chunk n goes out at start + n×interval, not interval after the last one: on a loaded
		// machine sleeps overshoot, and a late chunk is caught up so that the average rate, which
		// the server measures, is the one asked for.
		for i, n := 0, 0; i < len(body); i, n = i+chunk, n+1 {
			if _, err := c.Write(body[i:min(i+chunk, len(body))]); err != nil {
				return // the server answered and closed
			}
			time.Sleep(time.Until(start.Add(time.Duration(n+1) * interval)))
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	took := time.Since(start)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = br.ReadByte() // the server closes after the answer, or waits for the next request
	var ne net.Error
	closed := err != nil && !(errors.As(err, &ne) && ne.Timeout()) // EOF, or a reset if it was still writing
	return resp, took, closed
}

// paddedEcho is a valid body of the test service's Echo, of n bytes.
func paddedEcho(n int) []byte {
	b := []byte(`{"text":"L1","items":[{"id":"L1","result":1}]}`)
	return append(b[:len(b)-1], append(bytes.Repeat([]byte(" "), n-len(b)), '}')...)
}

// TestBodyRate: with a grace of 200 ms and a minimum of 2,000 bytes/s, a 2,000-byte body sent at
// twice the rate is answered 200, and one sent at half the rate is cut with 408 long before it
// would have ended; a caller without a token is answered 401 at once, before the grace, and the
// connection closes (its body is not waited for).
func TestBodyRate(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.BodyGrace = 200 * time.Millisecond
	cfg.MinBodyRate = 2000
	h := startTest(t, cfg)
	addr := strings.TrimPrefix(h.base, "http://")
	auth := "Bearer " + h.token("demo", "demo-secret")
	body := paddedEcho(2000)

	t.Run("twice the minimum rate passes", func(t *testing.T) {
		t.Parallel()
		resp, took, closed := slowPost(t, addr, auth, body, 200, 50*time.Millisecond) // 4,000 B/s: 0.5 s
		if resp.StatusCode != http.StatusOK {
			t.Errorf("status: got %d; want 200", resp.StatusCode)
		}
		if took < 400*time.Millisecond {
			t.Errorf("answered after %s; want after the whole body (about 0.5 s)", took)
		}
		if closed {
			t.Error("connection after 200: got closed; want kept alive")
		}
	})
	t.Run("half the minimum rate is cut", func(t *testing.T) {
		t.Parallel()
		resp, took, closed := slowPost(t, addr, auth, body, 100, 100*time.Millisecond) // 1,000 B/s: would take 2 s
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("status: got %d; want 408", resp.StatusCode)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("cut after %s; want about 0.4 s (grace, then behind the rate)", took)
		}
		if !closed || !resp.Close {
			t.Errorf("connection after 408: closed=%v Connection: close %v; want both", closed, resp.Close)
		}
	})
	t.Run("no token is not waited for", func(t *testing.T) {
		t.Parallel()
		resp, took, closed := slowPost(t, addr, "", body, 10, time.Second) // 10 B/s
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status: got %d; want 401", resp.StatusCode)
		}
		if took > 150*time.Millisecond {
			t.Errorf("answered after %s; want at once (before the 200 ms grace)", took)
		}
		if !closed {
			t.Error("connection after 401 with the body unread: got open; want closed")
		}
	})
}
