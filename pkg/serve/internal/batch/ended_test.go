package batch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestHalfClosedCallerGetsEverything: a caller that sends its whole body and then closes its
// side of the connection (a pipe into nc, curl -T) still gets every answer and the summary, with
// Content-Length and chunked alike: net/http ends the request's context at the half-close, and
// the engine does not take that for the caller's departure once the body has ended.
func TestHalfClosedCallerGetsEverything(t *testing.T) {
	t.Parallel()
	const n = 50
	var body strings.Builder
	for i := range n {
		body.WriteString(rec(fmt.Sprintf(`"r%d"`, i), "/slow", `{"ms":5}`))
	}
	for _, tc := range []struct{ name, head, body string }{
		{"content-length", fmt.Sprintf("Content-Length: %d\r\n", body.Len()), body.String()},
		{"chunked", "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", body.Len(), body.String())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, done := server(t, (&fake{}).Dispatch, Options{Workers: 2})
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n" + tc.head + "\r\n" + tc.body
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			all, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading the answers: %v (after %d bytes)", err, len(all))
			}
			got, last := lines(all), ""
			if len(got) > 0 {
				last = got[len(got)-1]
			}
			if len(got) != n+1 || last != fmt.Sprintf(`{"summary":{"records":%d,"ok":%d,"failed":0}}`, n, n) {
				t.Fatalf("got %d lines, the last %q; want %d answers and the summary", len(got), last, n)
			}
			res := wait(t, done, 5*time.Second, "Serve returning")
			if res.err != nil || !res.counts.Complete || res.counts.OK != n {
				t.Errorf("Serve = %+v, %v; want complete, %d ok", res.counts, res.err, n)
			}
		})
	}
}

// TestRevokedStream: once Revoked yields, the engine reads no more of the body (a read waiting
// for it included), answers every record read, and ends with {"end":…} carrying the answer a
// call would get, in place of the summary; Serve returns that error.
func TestRevokedStream(t *testing.T) {
	t.Parallel()
	revoked := make(chan error, 1)
	srv, done := server(t, (&fake{}).Dispatch, Options{Revoked: revoked})
	d := openDuplex(t, srv.URL)
	d.send(t, rec(`"a"`, "/echo", `{}`))
	if a := decode(t, d.next(t)); string(a.ID) != `"a"` || a.Status != 200 {
		t.Fatalf("first answer %+v; want a, 200", a)
	}
	d.send(t, rec(`"b"`, "/slow", `{"ms":300}`))
	time.Sleep(50 * time.Millisecond) // b is being dispatched; the engine waits in a read
	expired := rpcerr.InvalidToken(rpcerr.ReasonTokenExpired, "Authentication failed.", "The token has expired.")
	revoked <- expired
	if a := decode(t, d.next(t)); string(a.ID) != `"b"` || a.Status != 200 {
		t.Fatalf("the record read before the end: %+v; want b answered 200", a)
	}
	status, body := ErrorAnswer(expired)
	if got, want := d.next(t), fmt.Sprintf(`{"end":{"status":%d,"body":%s}}`, status, body); got != want || status != 401 {
		t.Fatalf("last line %s; want %s (401)", got, want)
	}
	if rest, err := io.ReadAll(d.lines); err != nil || len(rest) != 0 {
		t.Errorf("after the end line: got %q, %v; want the response ended", rest, err)
	}
	res := wait(t, done, 5*time.Second, "Serve returning")
	if !errors.Is(res.err, expired) || res.counts.Complete || res.counts.Records != 2 {
		t.Errorf("Serve = %+v, %v; want 2 records, incomplete, the revocation", res.counts, res.err)
	}
}

// TestRevokedGroupStream: a group stream whose rights go before its settings line is answered
// as a call would be, whole; after its head, it ends with the end line instead of its group.
func TestRevokedGroupStream(t *testing.T) {
	t.Parallel()
	denied := rpcerr.PermissionDenied("Permission denied.", `The client lacks the "forecast:group" permission this endpoint needs.`)
	run := func(t *testing.T, first string) (*duplex, chan error) {
		revoked := make(chan error, 1)
		svc := groupService{fw: lexile(t)}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = ServeGroup(r.Context(), w, r.Body, svc.open, Options{Revoked: revoked})
		}))
		t.Cleanup(srv.Close)
		if first == "" {
			revoked <- denied // before the settings line
		}
		return openDuplexWith(t, srv.URL, first), revoked
	}
	t.Run("before its head", func(t *testing.T) {
		t.Parallel()
		d, _ := run(t, "")
		body, _ := io.ReadAll(d.resp.Body)
		if d.resp.StatusCode != 403 || !strings.Contains(string(body), "forecast:group") {
			t.Errorf("got %d %s; want the 403 a call would get", d.resp.StatusCode, body)
		}
	})
	t.Run("after its head", func(t *testing.T) {
		t.Parallel()
		d, revoked := run(t, `{"testUncertainty": 0, "cutLevels": [700]}`+"\n")
		d.send(t, "[700, 50, 0]\n")
		if got := d.next(t); !strings.HasPrefix(got, "{") || strings.Contains(got, `"line"`) {
			t.Fatalf("first student %s", got)
		}
		revoked <- denied
		if got := d.next(t); !strings.HasPrefix(got, `{"end":{"status":403,"body":{`) {
			t.Fatalf("last line %s; want the end line with the 403", got)
		}
		if rest, _ := io.ReadAll(d.lines); len(rest) != 0 {
			t.Errorf("after the end line: %q; want nothing (no group)", rest)
		}
	})
}
