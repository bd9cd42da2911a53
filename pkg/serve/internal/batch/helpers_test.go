package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// fake is a dispatcher standing for a service. Paths:
//
//	/echo   200 {"path":…,"echo":<body verbatim>}
//	/bad    400 with a validation error naming the body's "x"
//	/slow   as /echo after a delay of body.ms milliseconds
//	/block  waits for its context, and counts the waits that ended by cancellation
//	/panic  panics
//	/big    200 with an answer of body.n bytes
//	        anything else: 404 NotFound
type fake struct {
	calls     atomic.Int64
	running   atomic.Int64
	cancelled atomic.Int64
	started   chan struct{} // /block signals each start here when non-nil
}

func (f *fake) Dispatch(ctx context.Context, path string, body []byte) (int, []byte) {
	f.calls.Add(1)
	f.running.Add(1)
	defer f.running.Add(-1)
	var b struct {
		MS int `json:"ms"`
		N  int `json:"n"`
	}
	_ = json.Unmarshal(body, &b)
	switch path {
	case "/echo":
	case "/slow":
		time.Sleep(time.Duration(b.MS) * time.Millisecond)
	case "/bad":
		return ErrorAnswer(rpcerr.Invalid("x", "must be %d", 1))
	case "/block":
		if f.started != nil {
			f.started <- struct{}{}
		}
		<-ctx.Done()
		f.cancelled.Add(1)
		return http.StatusServiceUnavailable, statusAnswer(http.StatusServiceUnavailable)
	case "/panic":
		panic("a bug")
	case "/big":
		return http.StatusOK, []byte(`{"pad":"` + strings.Repeat("x", b.N) + `"}`)
	default:
		return http.StatusNotFound, statusAnswer(http.StatusNotFound)
	}
	return http.StatusOK, []byte(`{"path":"` + path + `","echo":` + string(body) + `}`)
}

// result is what a test server's Serve returned.
type result struct {
	counts Counts
	err    error
}

// server runs Serve behind a real loopback listener; each stream's result comes on the channel.
func server(t *testing.T, d DispatcherFunc, o Options) (*httptest.Server, chan result) {
	t.Helper()
	done := make(chan result, 16)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Serve(r.Context(), w, r.Body, d, o)
		done <- result{c, err}
	}))
	t.Cleanup(srv.Close)
	return srv, done
}

// post sends body whole and returns the answer lines.
func post(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := http.Post(url, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("head %d %q; want 200 application/x-ndjson", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	all, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return lines(all)
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// duplex is a request whose body the test writes while it reads the answers.
type duplex struct {
	body   *io.PipeWriter
	resp   *http.Response
	lines  *bufio.Reader
	cancel context.CancelFunc
}

func openDuplex(t *testing.T, url string) *duplex {
	t.Helper()
	return openDuplexWith(t, url, "")
}

// openDuplexWith sends first while the request is made.
func openDuplexWith(t *testing.T, url, first string) *duplex {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	if first != "" {
		go func() { _, _ = io.WriteString(pw, first) }()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); pw.Close(); resp.Body.Close() })
	return &duplex{body: pw, resp: resp, lines: bufio.NewReaderSize(resp.Body, 1<<16), cancel: cancel}
}

func (d *duplex) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(d.body, s); err != nil {
		t.Fatal(err)
	}
}

func (d *duplex) next(t *testing.T) string {
	t.Helper()
	line, err := d.lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading an answer: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

func rec(id, path, body string) string {
	return `{"id":` + id + `,"path":"` + path + `","body":` + body + "}\n"
}

// answer is an answer line decoded, with its body kept as bytes.
type answer struct {
	ID      json.RawMessage `json:"id"`
	Line    int             `json:"line"`
	Status  int             `json:"status"`
	Body    json.RawMessage `json:"body"`
	Summary *struct {
		Records, OK, Failed int
	} `json:"summary"`
}

func decode(t *testing.T, line string) answer {
	t.Helper()
	var a answer
	d := json.NewDecoder(bytes.NewReader([]byte(line)))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		t.Fatalf("answer %q is not an answer line: %v", line, err)
	}
	return a
}

func wait[T any](t *testing.T, c <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(within):
		t.Fatalf("%s: nothing within %v", what, within)
		panic("unreachable")
	}
}

type httptestServer = httptest.Server

func newHTTPTest(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// statusAnswer is the body the service answers code with, as a dispatcher writes it.
func statusAnswer(code int) []byte { return rpcerr.JSON(rpcerr.BodyFor(code, nil)) }
