package httpfront

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestContinueIfExpected: a stream's handler that answers its head before reading sends 100
// Continue first when the caller asked for it (in any case, among other expectations), and not
// when it did not, sent no body, or spoke HTTP/1.0.
func TestContinueIfExpected(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		continueIfExpected(w, r)
		w.WriteHeader(http.StatusOK) // the stream's head, before its body is read
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name, proto, expect string
		length              int
		want                []string
	}{
		{"asked", "HTTP/1.1", "100-continue", 2, []string{"HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"}},
		{"asked in another case, among others", "HTTP/1.1", "foo, 100-CONTINUE", 2, []string{"HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"}},
		{"not asked", "HTTP/1.1", "", 2, []string{"HTTP/1.1 200 OK"}},
		{"no body", "HTTP/1.1", "100-continue", 0, []string{"HTTP/1.1 200 OK"}},
		{"HTTP/1.0", "HTTP/1.0", "100-continue", 2, []string{"HTTP/1.0 200 OK"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := "POST / " + tc.proto + "\r\nHost: x\r\nConnection: close\r\nContent-Length: " + string(rune('0'+tc.length)) + "\r\n"
			if tc.expect != "" {
				head += "Expect: " + tc.expect + "\r\n"
			}
			if _, err := c.Write([]byte(head + "\r\n")); err != nil { // the body is never sent
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var got []string
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "HTTP/") {
					got = append(got, line)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("status lines: got %q; want %q", got, tc.want)
			}
		})
	}
}
