package serve

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBatchExpectContinue: a batch that asks for 100 Continue gets it before the 200 head, and
// only once it is admitted (a refusal comes without it, so no body is sent); a caller that does
// not ask gets none.
func TestBatchExpectContinue(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	token := h.token("batcher", clientSecret)
	addr := strings.TrimPrefix(h.base, "http://")
	line := `{"id":"a","path":"` + throwawayPath + `","body":{"text":"L000100"}}` + "\n"
	for _, tc := range []struct {
		name, auth, expect string
		proto              string
		want               []string // the status lines, in order
	}{
		{"asked", "Bearer " + token, "100-continue", "HTTP/1.1", []string{"HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"}},
		{"asked in another case", "Bearer " + token, "100-Continue", "HTTP/1.1", []string{"HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"}},
		{"not asked", "Bearer " + token, "", "HTTP/1.1", []string{"HTTP/1.1 200 OK"}},
		{"refused", "Bearer nope", "100-continue", "HTTP/1.1", []string{"HTTP/1.1 401 Unauthorized"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			head := fmt.Sprintf("POST "+throwawayBatchPath+" %s\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n",
				tc.proto, addr, tc.auth, len(line))
			if tc.expect != "" {
				head += "Expect: " + tc.expect + "\r\n"
			}
			if _, err := conn.Write([]byte(head + "\r\n")); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			var got []string
			for i, want := range tc.want {
				status := readHead(t, br)
				got = append(got, status)
				if status != want {
					t.Fatalf("status lines: got %q; want %q", got, tc.want)
				}
				if i == 0 && tc.expect != "" && strings.Contains(status, " 100 ") || tc.expect == "" && i == 0 {
					// The body, only now for a caller that waited for 100 Continue.
					if _, err := conn.Write([]byte(line)); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// readHead reads one answer's head and returns its status line.
func readHead(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	status := ""
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a head: %v (so far %q)", err, status)
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			return status
		}
		if status == "" {
			status = l
		}
	}
}

// TestBatchCurlStreamsAtOnce times the documented curl command (docs/api.md, which lets curl
// send Expect: 100-continue) against the same with -H 'Expect:': with 100 Continue answered at
// once, curl does not wait out its one-second timer, and the two take about as long.
func TestBatchCurlStreamsAtOnce(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: the documented command cannot be timed")
	}
	h := startTestBatch(t, nil)
	token := h.token("batcher", clientSecret)
	var body strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&body, `{"id":"r%d","path":"%s","body":{"text":"L000100"}}`+"\n", i, throwawayPath)
	}
	run := func(extra ...string) (time.Duration, string) {
		args := append([]string{"-s", "-S", "-v", "-X", "POST", h.base + throwawayBatchPath, "--data-binary", "@-",
			"-H", "Authorization: Bearer " + token, "-H", "Content-Type: application/x-ndjson"}, extra...)
		cmd := exec.Command(curl, args...)
		cmd.Stdin = strings.NewReader(body.String())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		out, err := cmd.Output()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("curl %q: %v\n%s", extra, err, stderr.String())
		}
		if want := `{"summary":{"records":20000,"ok":20000,"failed":0}}`; !strings.Contains(string(out), want) {
			t.Fatalf("curl %q: got no %s in the answer's %d bytes", extra, want, len(out))
		}
		return took, stderr.String()
	}
	// The best of three each, the two interleaved: the machine's other work adds to a run, never
	// takes away, and drifts alike for both.
	var documented, without time.Duration
	var trace string
	for range 3 {
		d, tr := run()
		w, _ := run("-H", "Expect:")
		if documented == 0 || d < documented {
			documented, trace = d, tr
		}
		if without == 0 || w < without {
			without = w
		}
	}
	t.Logf("documented command %v; with -H 'Expect:' %v", documented, without)
	// curl says when its timer ran out: the stall, whatever the machine's load.
	if !strings.Contains(trace, "Expect: 100-continue") || !strings.Contains(trace, "HTTP/1.1 100 Continue") || strings.Contains(trace, "Done waiting for 100-continue") {
		t.Fatalf("curl's trace: want it to send Expect: 100-continue and be answered 100 Continue before its timer ran out\n%s", trace)
	}
	// curl's timer is one second: a stall shows as that much more.
	if limit := without*5/4 + 500*time.Millisecond; documented > limit {
		t.Errorf("documented command: got %v; want at most %v (%v without Expect)", documented, limit, without)
	}
}
