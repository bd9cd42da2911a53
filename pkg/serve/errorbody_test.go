package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestHeaderTooLargeIsJSON: a request whose header is over the limit (64 KiB, and net/http's
// 4 KiB of slack) is answered 431 with the documented JSON body, not net/http's plain text; a
// header under the limit reaches the API. Only a whole server shows it: the limit is the frame's
// http.Server's MaxHeaderBytes, and the JSON is its connection writer's (drain.go), not the front's.
func TestHeaderTooLargeIsJSON(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	addr := strings.TrimPrefix(h.base, "http://")
	for _, tc := range []struct {
		name   string
		header int // bytes of one X-Big header's value
		want   int
	}{
		{"60 KiB header", 60 << 10, http.StatusUnauthorized}, // reaches the API: no token
		{"70 KiB header", 70 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB header", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			go func() { // the server may answer before it has read it all
				_, _ = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\nContent-Length: 2\r\n\r\n{}", throwawayPath, strings.Repeat("a", tc.header))
			}()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("read the answer: %v", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("got %d %s; want %d", resp.StatusCode, body, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q; want application/json", ct)
			}
			var b rpcerr.ErrorBody
			if err := json.Unmarshal(body, &b); err != nil || b.ExceptionType == "" || b.Message == "" {
				t.Fatalf("body %q: got %+v, %v; want the error body", body, b, err)
			}
			if tc.want == http.StatusRequestHeaderFieldsTooLarge && (b.ExceptionType != rpcerr.ExceptionTooLarge || !resp.Close) {
				t.Errorf("got %+v, Connection: close %v; want RequestTooLarge and the connection closed", b, resp.Close)
			}
		})
	}
}
