package serve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Rights for the life of a stream: each record is authorized as a call made now would be, and a
// stream whose own rights go (its client removed or re-keyed, its token expired, its stream
// permission taken) ends with the answer a call would get, on NDJSON and gRPC alike, whether or
// not the caller sends anything more.

const echoLine = `{"id":"%s","path":"` + throwawayPath + `","body":{"text":"x"}}` + "\n"

// editBatcher rewrites startTestBatch's clients file with the batcher's permissions replaced by perms
// (a YAML list's items), or without the batcher when perms is "", and reloads.
func editBatcher(t *testing.T, h *harness, perms string) {
	t.Helper()
	path := h.srv.cfg.ClientsFile
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.SplitAfter(string(data), "\n  - ")
	var out strings.Builder
	for _, e := range entries {
		switch {
		case !strings.HasPrefix(e, "clientId: batcher\n"):
			out.WriteString(e)
		case perms == "":
			out.WriteString("clientId: removed-batcher\n" + e[len("clientId: batcher\n"):])
		default:
			i := strings.Index(e, "permissions: [")
			j := strings.Index(e[i:], "]")
			out.WriteString(e[:i] + "permissions: [" + perms + e[i+j:])
		}
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(out.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if _, err := h.srv.issuer.Reload(); err != nil {
		t.Fatal(err)
	}
}

// ndjsonStream is a batch stream whose body the test writes while it reads the answers.
type ndjsonStream struct {
	body  *io.PipeWriter
	lines *bufio.Reader
}

func openNDJSON(t *testing.T, h *harness, auth string) *ndjsonStream {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, h.base+throwawayBatchPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjson)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream's head: got %d; want 200", resp.StatusCode)
	}
	return &ndjsonStream{body: pw, lines: bufio.NewReader(resp.Body)}
}

func (s *ndjsonStream) send(t *testing.T, id string) {
	t.Helper()
	go func() { _, _ = io.WriteString(s.body, strings.ReplaceAll(echoLine, "%s", id)) }()
}

// next reads an answer line, failing after within.
func (s *ndjsonStream) next(t *testing.T, within time.Duration) string {
	t.Helper()
	type read struct {
		line string
		err  error
	}
	c := make(chan read, 1)
	go func() { l, err := s.lines.ReadString('\n'); c <- read{l, err} }()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("reading an answer: %v (got %q)", r.err, r.line)
		}
		return strings.TrimSuffix(r.line, "\n")
	case <-time.After(within):
		t.Fatalf("no answer within %s", within)
		return ""
	}
}

// unaryBody is the body a unary call of the standard path gets with auth now, and its status.
func unaryBody(h *harness, auth string) (int, string) {
	r := h.post(throwawayPath, `{"text":"x"}`, "Authorization", auth)
	return r.status, string(r.body)
}

// TestNDJSONStreamRights: a record whose path's permission was taken at a reload is answered
// 403 as the call is, and the stream goes on; a client removed, or a token expired, ends the
// stream at once with the call's 401 as its last line, though the caller sends nothing more.
func TestNDJSONStreamRights(t *testing.T) {
	t.Parallel()
	t.Run("record's permission taken", func(t *testing.T) {
		t.Parallel()
		h := startTestBatch(t, nil)
		auth := "Bearer " + h.token("batcher", clientSecret)
		s := openNDJSON(t, h, auth)
		s.send(t, "a")
		if got := s.next(t, 5*time.Second); !strings.HasPrefix(got, `{"id":"a","status":200,`) {
			t.Fatalf("before the reload: got %s; want 200", got)
		}
		editBatcher(t, h, strconv.Quote(throwawayBatchPerm))
		code, body := unaryBody(h, auth)
		s.send(t, "b")
		if got, want := s.next(t, 5*time.Second), `{"id":"b","status":403,"body":`+body+`}`; got != want || code != 403 {
			t.Fatalf("after the reload: got %s; want %s (the call's %d)", got, want, code)
		}
		s.body.Close()
		if got := s.next(t, 5*time.Second); got != `{"summary":{"records":2,"ok":1,"failed":1}}` {
			t.Errorf("summary: got %s; want 2 records, 1 ok, 1 failed", got)
		}
	})
	for _, tc := range []struct {
		name  string
		clock *tokenClock
		end   func(t *testing.T, h *harness)
	}{
		{"client removed", nil, func(t *testing.T, h *harness) { editBatcher(t, h, "") }},
		{"stream's permission taken", nil, func(t *testing.T, h *harness) { editBatcher(t, h, strconv.Quote(throwawayPerm)) }},
		{"token expired", &tokenClock{ttl: 2 * time.Second, leeway: time.Millisecond}, func(*testing.T, *harness) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startTestBatch(t, func(c *Config) { c.tokenClock = tc.clock })
			auth := "Bearer " + h.token("batcher", clientSecret)
			s := openNDJSON(t, h, auth)
			s.send(t, "a")
			if got := s.next(t, 5*time.Second); !strings.HasPrefix(got, `{"id":"a","status":200,`) {
				t.Fatalf("first record: got %s; want 200", got)
			}
			changed := time.Now()
			if tc.clock != nil {
				changed = validUntil(t, h, auth)
			}
			tc.end(t, h)
			got := s.next(t, 5*time.Second)
			t.Logf("the end line came %s after the reload, or the token's expiry", time.Since(changed))
			// What a new stream with the token gets now: a call's 401, or the stream route's 403.
			r := h.do(http.MethodPost, throwawayBatchPath, ndjson, "", "Authorization", auth)
			if want := `{"end":{"status":` + strconv.Itoa(r.status) + `,"body":` + string(r.body) + `}}`; got != want || (r.status != 401 && r.status != 403) {
				t.Fatalf("last line: got %s; want %s", got, want)
			}
			if rest, err := io.ReadAll(s.lines); err != nil || len(rest) != 0 {
				t.Errorf("after the end line: got %q, %v; want the stream ended", rest, err)
			}
		})
	}
}

// TestGRPCStreamRights: the same over gRPC: a record answered PERMISSION_DENIED as the call is,
// the stream going on; a client removed or a token expired ends the stream UNAUTHENTICATED.
func TestGRPCStreamRights(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		clock  *tokenClock
		change func(t *testing.T, h *harness)
		code   codes.Code // of the next record's answer (ok stream), or of the stream
		ends   bool
	}{
		{"record's permission taken", nil, func(t *testing.T, h *harness) { editBatcher(t, h, strconv.Quote(throwawayBatchPerm)) }, codes.PermissionDenied, false},
		{"client removed", nil, func(t *testing.T, h *harness) { editBatcher(t, h, "") }, codes.Unauthenticated, true},
		{"stream's permission taken", nil, func(t *testing.T, h *harness) { editBatcher(t, h, strconv.Quote(throwawayPerm)) }, codes.PermissionDenied, true},
		{"token expired", &tokenClock{ttl: 2 * time.Second, leeway: time.Millisecond}, func(*testing.T, *harness) {}, codes.Unauthenticated, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startTestBatch(t, func(c *Config) { c.tokenClock = tc.clock })
			tok := h.token("batcher", clientSecret)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st, err := openEchoBatch(ctx, h, tok)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SendMsg(echoRecordOf("a", "echo", "x")); err != nil {
				t.Fatal(err)
			}
			if a, err := recvAnswer(st); err != nil || readAnswer(t, a).text != "X" {
				t.Fatalf("first record: got %v, %v; want the handler's answer X", a, err)
			}
			changed := time.Now()
			if tc.clock != nil {
				changed = validUntil(t, h, "Bearer "+tok)
			}
			tc.change(t, h)
			if !tc.ends {
				if err := st.SendMsg(echoRecordOf("b", "echo", "x")); err != nil {
					t.Fatal(err)
				}
				a, err := recvAnswer(st)
				unary := h.echoUnaryStatus(tok, "x")
				if err != nil || readAnswer(t, a).err.GetCode() != int32(tc.code) || status.Code(unary) != tc.code {
					t.Fatalf("after the reload: got %v, %v (the call: %v); want the record %v as the call", a, err, unary, tc.code)
				}
				_ = st.CloseSend()
				if _, err := recvAnswer(st); !errors.Is(err, io.EOF) {
					t.Errorf("the stream's end: got %v; want EOF (it went on)", err)
				}
				return
			}
			_, err = recvAnswer(st) // the caller sends nothing more
			if status.Code(err) != tc.code {
				t.Fatalf("stream: got %v after %s; want %v", err, time.Since(changed), tc.code)
			}
			t.Logf("the stream ended %s after the reload, or the token's expiry", time.Since(changed))
		})
	}
}

// validUntil is when the service starts refusing the token of auth as expired.
func validUntil(t *testing.T, h *harness, auth string) time.Time {
	t.Helper()
	claims, err := h.srv.issuer.Verify(strings.TrimPrefix(auth, "Bearer "), h.srv.cfg.Service)
	if err != nil {
		t.Fatal(err)
	}
	return h.srv.issuer.ValidUntil(claims)
}
