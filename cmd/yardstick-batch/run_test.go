package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/ndjson"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// service is a batch endpoint for the client to talk to: the real engine with a fake
// dispatcher, a token check and an /authToken.
type service struct {
	requests atomic.Int64 // batch requests accepted
	calls    atomic.Int64 // records dispatched
	tokens   atomic.Int64 // tokens issued
	// dropAfter, when > 0, drops the first request's connection after that many dispatches.
	dropAfter int64
	// expireFirst makes the first token issued refused (as an expired one would be).
	expireFirst bool
	// revokeFirst ends the first batch stream with the service's end line (a 401: its token
	// expired) once it has answered that many records.
	revokeFirst int64
	// busyFirst answers the first batch request 503 with Retry-After (not admitted).
	busyFirst  bool
	busyAnswer atomic.Bool

	mu      sync.Mutex
	perConn map[int64]int // records dispatched per request
}

func (s *service) start(t *testing.T) *httptest.Server {
	t.Helper()
	s.perConn = map[int64]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /authToken", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ ClientID, ClientSecret string }
		_ = json.NewDecoder(r.Body).Decode(&c)
		if c.ClientID != "demo" || c.ClientSecret != "demo-secret" {
			rpcerr.Write(w, rpcerr.ToHTTP(rpcerr.NotAuthenticated("Bad credentials.", "")))
			return
		}
		n := s.tokens.Add(1)
		fmt.Fprintf(w, `{"accessToken":"tok%d","expiresIn":86400}`, n)
	})
	mux.HandleFunc("POST /api/score/batch", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Bearer tok") || (s.expireFirst && auth == "Bearer tok1") {
			rpcerr.Write(w, rpcerr.ToHTTP(rpcerr.NotAuthenticated("Invalid token.", "")))
			return
		}
		if s.busyFirst && !s.busyAnswer.Swap(true) {
			w.Header().Set("Retry-After", "1")
			rpcerr.WriteStatus(w, http.StatusServiceUnavailable)
			return
		}
		n := s.requests.Add(1)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		var mine atomic.Int64
		revoked := make(chan error, 1)
		d := ndjson.DispatcherFunc(func(ctx context.Context, path string, body []byte) (int, []byte) {
			s.calls.Add(1)
			k := mine.Add(1)
			if n == 1 && s.dropAfter > 0 && k >= s.dropAfter {
				cancel()
			}
			if n == 1 && k == s.revokeFirst {
				revoked <- rpcerr.InvalidToken(rpcerr.ReasonTokenExpired, "Authentication failed.", "The token has expired.")
			}
			s.mu.Lock()
			s.perConn[n]++
			s.mu.Unlock()
			var b struct{ MS int }
			_ = json.Unmarshal(body, &b)
			time.Sleep(time.Duration(b.MS) * time.Millisecond)
			if path == "/bad" {
				return ndjson.ErrorAnswer(rpcerr.Invalid("x", "is wrong"))
			}
			return 200, []byte(`{"path":"` + path + `","echo":` + string(body) + `}`)
		})
		_, err := ndjson.Serve(ctx, w, r.Body, d, ndjson.Options{Log: slog.New(slog.DiscardHandler), Revoked: revoked, Workers: 1})
		if err != nil && n == 1 && s.dropAfter > 0 {
			panic(http.ErrAbortHandler) // the connection drops mid-stream
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func runClient(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := run(ctx, append([]string{"-backoff", "10ms"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func records(n int, maxMS int, seed uint64) (string, []string) {
	r := rand.New(rand.NewPCG(seed, 1))
	var in strings.Builder
	var want []string
	for i := range n {
		body := fmt.Sprintf(`{"i": %d, "ms": %d}`, i, r.IntN(maxMS+1))
		fmt.Fprintf(&in, `{"id": "r%d", "path": "/echo", "body": %s}`+"\n", i, body)
		want = append(want, fmt.Sprintf(`{"id":"r%d","status":200,"body":{"path":"/echo","echo":%s}}`, i, body))
	}
	return in.String(), want
}

func TestNDJSON(t *testing.T) {
	t.Parallel()
	s := &service{}
	srv := s.start(t)
	in := "\n" + `{"id":"a","path":"/echo","body":{"x":1}}` + "\nnot json\n" +
		`{"id":"b","path":"/bad","body":{}}` + "\n" +
		`{"id":"c","path":"/echo","body":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}` + "\n" +
		`{"id":"d","path":"/echo","body":{}}`
	got, err := runClient(t, in, "-url", srv.URL+"/api/score/batch", "-token", "tok9")
	if !errors.Is(err, errSomeFailed) || exitCode(err) != 1 {
		t.Fatalf("got %v (exit %d); want some records failed (exit 1)", err, exitCode(err))
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	_, bad := ndjson.ErrorAnswer(rpcerr.Invalid("x", "is wrong"))
	want := []string{
		`{"id":"a","status":200,"body":{"path":"/echo","echo":{"x":1}}}`,
		`{"line":3,"status":400,`,
		`{"id":"b","status":400,"body":` + string(bad) + `}`,
		`{"line":5,"status":413,"body":` + string(ndjson.TooLargeAnswer()) + `}`,
		`{"id":"d","status":200,"body":{"path":"/echo","echo":{}}}`,
		`{"summary":{"records":5,"ok":2,"failed":3}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("output\n%s\nwant %d lines", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %s\nwant %s", i, lines[i], want[i])
		}
	}
	if s.calls.Load() != 3 {
		t.Errorf("%d records sent; the broken ones must be answered locally", s.calls.Load())
	}
}

func TestCSV(t *testing.T) {
	t.Parallel()
	s := &service{}
	srv := s.start(t)
	in := "id,priorAbility,timeOfYear,grade,items,note\n" +
		"s1,500.5,BOY,3,\"[1,2]\",\n" +
		"s2,007,EOY,,,\"say \"\"hi\"\"\"\n" +
		"s3,1,2\n"
	got, err := runClient(t, in, "-url", srv.URL+"/api/score/batch", "-token", "tok1", "-in", "csv", "-out", "csv", "-path", "/echo")
	if !errors.Is(err, errSomeFailed) {
		t.Fatalf("got %v; want the row of 3 fields reported failed", err)
	}
	want := "line,id,status,body,ability,abilityDisplay,uncertainty,framework,percentile,reachElapsedDays,reachGrade,reachTimeOfYear,reachAbility,reachProbability,peakElapsedDays,peakProbability,exceptionType,error\n" +
		`2,s1,200,"{""path"":""/echo"",""echo"":{""priorAbility"":500.5,""timeOfYear"":""BOY"",""grade"":3,""items"":[1,2]}}",,,,,,,,,,,,,,` + "\n" +
		`3,s2,200,"{""path"":""/echo"",""echo"":{""priorAbility"":""007"",""timeOfYear"":""EOY"",""note"":""say \""hi\""""}}",,,,,,,,,,,,,,` + "\n"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "\n4,,400,") || !strings.Contains(got, ",,,,,ValidationError,nonFieldErrors: the row has 3 fields; the header has 6\n") {
		t.Errorf("output\n%s\nwant\n%s4,,400,…", got, want)
	}

	// A body column holds the request; a path column the path.
	got, err = runClient(t, "path,id,body\n/echo,x,\"{\"\"a\"\": [1]}\"\n/echo,y,[1]\n", "-url", srv.URL+"/api/score/batch", "-token", "tok1", "-in", "csv")
	if !errors.Is(err, errSomeFailed) {
		t.Fatalf("got %v; want y's failure reported", err)
	}
	lines := strings.Split(got, "\n")
	if lines[0] != `{"id":"x","status":200,"body":{"path":"/echo","echo":{"a": [1]}}}` ||
		!strings.HasPrefix(lines[1], `{"line":3,"status":400,`) || !strings.Contains(lines[1], "must be a JSON object") {
		t.Errorf("output\n%s", got)
	}
}

// The connection drops mid-stream: the client sends the unanswered records again on a new
// stream, and the output has every record once, in order.
func TestResumeAfterDrop(t *testing.T) {
	t.Parallel()
	s := &service{dropAfter: 40}
	srv := s.start(t)
	in, want := records(300, 0, 1)
	got, err := runClient(t, in, "-url", srv.URL+"/api/score/batch", "-client-id", "demo", "-client-secret", "demo-secret", "-window", "64")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"summary":{"records":300,"ok":300,"failed":0}}`)
	if got != strings.Join(want, "\n")+"\n" {
		t.Errorf("output after a drop differs from the records' answers:\n%.2000s", got)
	}
	if s.requests.Load() < 2 {
		t.Errorf("%d requests; the drop should have made a second", s.requests.Load())
	}
	t.Logf("%d requests, %d dispatches for 300 records", s.requests.Load(), s.calls.Load())
}

// -parallel 4: four streams at once, answers in input order whatever order they finish in.
func TestParallelOrder(t *testing.T) {
	t.Parallel()
	s := &service{}
	srv := s.start(t)
	in, want := records(400, 3, 2)
	got, err := runClient(t, in, "-url", srv.URL+"/api/score/batch", "-token", "tok1", "-parallel", "4", "-window", "8")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"summary":{"records":400,"ok":400,"failed":0}}`)
	if got != strings.Join(want, "\n")+"\n" {
		t.Errorf("output of -parallel 4 not in input order:\n%.2000s", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.perConn) != 4 {
		t.Errorf("records spread over %d streams; want 4: %v", len(s.perConn), s.perConn)
	}
	for n, c := range s.perConn {
		if c != 100 {
			t.Errorf("stream %d carried %d records; want 100", n, c)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	t.Run("an expired token is fetched again", func(t *testing.T) {
		t.Parallel()
		s := &service{expireFirst: true}
		srv := s.start(t)
		in, _ := records(5, 0, 3)
		got, err := runClient(t, in, "-url", srv.URL+"/api/score/batch", "-client-id", "demo", "-client-secret", "demo-secret")
		if err != nil || !strings.HasSuffix(got, `{"summary":{"records":5,"ok":5,"failed":0}}`+"\n") || s.tokens.Load() != 2 {
			t.Errorf("%v, %d tokens, output\n%s", err, s.tokens.Load(), got)
		}
	})
	t.Run("a stream ended for its token is resumed with a new one", func(t *testing.T) {
		t.Parallel()
		s := &service{revokeFirst: 3}
		srv := s.start(t)
		in, want := records(40, 2, 4)
		// A window of 8: the body is still open when the token's rights go.
		got, err := runClient(t, in, "-window", "8", "-url", srv.URL+"/api/score/batch", "-client-id", "demo", "-client-secret", "demo-secret")
		if err != nil || got != strings.Join(want, "\n")+"\n"+`{"summary":{"records":40,"ok":40,"failed":0}}`+"\n" || s.tokens.Load() != 2 || s.requests.Load() != 2 {
			t.Errorf("%v, %d tokens, %d requests, output\n%s", err, s.tokens.Load(), s.requests.Load(), got)
		}
	})
	t.Run("a stream ended for its token, without credentials", func(t *testing.T) {
		t.Parallel()
		srv := (&service{revokeFirst: 1}).start(t)
		in, _ := records(40, 2, 5)
		_, err := runClient(t, in, "-window", "8", "-url", srv.URL+"/api/score/batch", "-token", "tok1")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("err = %v; want the end line's 401", err)
		}
	})
	t.Run("bad credentials", func(t *testing.T) {
		t.Parallel()
		srv := (&service{}).start(t)
		_, err := runClient(t, "", "-url", srv.URL+"/api/score/batch", "-client-id", "demo", "-client-secret", "nope")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("err = %v; want the 401 of /authToken", err)
		}
	})
	t.Run("a refused token is not retried", func(t *testing.T) {
		t.Parallel()
		s := &service{}
		srv := s.start(t)
		_, err := runClient(t, `{"id":"a","path":"/echo","body":{}}`, "-url", srv.URL+"/api/score/batch", "-token", "wrong")
		if err == nil || !strings.Contains(err.Error(), "401") || s.requests.Load() != 0 {
			t.Errorf("err = %v after %d requests; want the 401", err, s.requests.Load())
		}
	})
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"-url", "localhost:8080", "-token", "t"},
		{"-url", "http://h/api/score/batch"},
		{"-url", "http://h/api/score/batch", "-token", "t", "-parallel", "0"},
		{"-url", "http://h/api/score/batch", "-token", "t", "-out", "xml"},
		{"-url", "http://h/api/score/batch", "-token", "t", "a", "b"},
	} {
		if err := run(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v; want a usage error", args, err)
		}
	}
}

// A stream not admitted (503 before the head) is tried again after Retry-After; progress goes to
// stderr when asked for.
func TestBusyThenAdmitted(t *testing.T) {
	t.Parallel()
	s := &service{busyFirst: true}
	srv := s.start(t)
	in, want := records(20, 0, 5)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-url", srv.URL + "/api/score/batch", "-token", "tok1", "-progress", "on"}, strings.NewReader(in), &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"summary":{"records":20,"ok":20,"failed":0}}`)
	if out.String() != strings.Join(want, "\n")+"\n" || s.requests.Load() != 1 {
		t.Errorf("after a 503: %d requests admitted, output\n%s", s.requests.Load(), out.String())
	}
	if p := errOut.String(); !strings.Contains(p, "20 answered (20 ok, 0 failed), 1 reconnections") || !strings.HasSuffix(p, "\n") {
		t.Errorf("progress %q", p)
	}
}

// Not a terminal: no progress unless asked for.
func TestNoProgressOffTerminal(t *testing.T) {
	t.Parallel()
	srv := (&service{}).start(t)
	in, _ := records(3, 0, 6)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-url", srv.URL + "/api/score/batch", "-token", "tok1"}, strings.NewReader(in), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr %q; want nothing when it is not a terminal", errOut.String())
	}
}

// -resume carries on a run cut short: the records its output file answered are skipped, the
// cut last line goes, and the file ends as a run without a cut would have written it.
func TestResumeRun(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"ndjson", "csv"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			s := &service{}
			srv := s.start(t)
			in, _ := records(50, 0, 7)
			in = strings.Replace(in, `{"id": "r3", "path": "/echo",`, `{"id": 3, "path": "/echo",`, 1) // answered locally
			dir := t.TempDir()
			args := func(out string, more ...string) []string {
				return append([]string{"-url", srv.URL + "/api/score/batch", "-token", "tok1", "-out", format, "-o", dir + "/" + out, "-parallel", "3"}, more...)
			}
			if _, err := runClient(t, in, args("full")...); !errors.Is(err, errSomeFailed) {
				t.Fatalf("got %v; want r3's failure reported", err)
			}
			full, _ := os.ReadFile(dir + "/full")
			// Cut after 11 whole lines (the CSV header and 10 rows, or 11 answers), in the
			// middle of the next.
			cut, rest := 0, full
			for range 11 {
				i := bytes.IndexByte(rest, '\n')
				cut += i + 1
				rest = rest[i+1:]
			}
			if err := os.WriteFile(dir+"/cut", full[:cut+5], 0o644); err != nil {
				t.Fatal(err)
			}
			answered := 11
			if format == "csv" {
				answered = 10
			}
			calls := s.calls.Load()
			if _, err := runClient(t, in, args("cut", "-resume")...); !errors.Is(err, errSomeFailed) {
				t.Fatalf("got %v; want r3's failure (answered before the cut) reported", err)
			}
			got, _ := os.ReadFile(dir + "/cut")
			if !bytes.Equal(got, full) {
				t.Errorf("resumed file\n%s\nwant\n%s", got, full)
			}
			// 49 records are sent (r3 is answered locally); the first `answered` were done.
			if sent := s.calls.Load() - calls; sent != int64(49-(answered-1)) {
				t.Errorf("%d records sent on resuming; want %d", sent, 49-(answered-1))
			}
			if format == "ndjson" {
				calls = s.calls.Load()
				if _, err := runClient(t, in, args("full", "-resume")...); !errors.Is(err, errSomeFailed) || s.calls.Load() != calls {
					t.Errorf("resuming a finished run: %v, %d records sent; want none", err, s.calls.Load()-calls)
				}
				if again, _ := os.ReadFile(dir + "/full"); !bytes.Equal(again, full) {
					t.Errorf("resuming a finished run changed its file")
				}
			}
		})
	}
}

// TestExitStatus: 0 when every record was answered 200, 1 when some were not (the output
// complete), 2 for a wrong command line, 3 when the stream could not run; -help prints the
// usage on stdout and exits 0.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	s := &service{}
	srv := s.start(t)
	url := srv.URL + "/api/score/batch"
	ok := `{"id":"a","path":"/echo","body":{}}` + "\n"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"every record 200", ok + ok, []string{"-url", url, "-token", "tok1"}, 0},
		{"no records", "", []string{"-url", url, "-token", "tok1"}, 0},
		{"one record 400", ok + `{"id":"b","path":"/bad","body":{}}` + "\n", []string{"-url", url, "-token", "tok1"}, 1},
		{"one line not a record", ok + "not json\n", []string{"-url", url, "-token", "tok1"}, 1},
		{"an unknown flag", ok, []string{"-url", url, "-token", "tok1", "-colour"}, 2},
		{"no url", ok, []string{"-token", "tok1"}, 2},
		{"the token refused", ok, []string{"-url", url, "-token", "wrong"}, 3},
		{"the service unreachable", ok, []string{"-url", "http://127.0.0.1:1/api/score/batch", "-token", "tok1", "-retries", "0"}, 3},
		{"the input unreadable", "", []string{"-url", url, "-token", "tok1", t.TempDir() + "/missing.ndjson"}, 3},
		{"-help", "", []string{"-help"}, 0},
		{"-h", "", []string{"-h"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run(ctx, append([]string{"-backoff", "10ms"}, tc.args...), strings.NewReader(tc.stdin), &out, &errOut)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit %d (%v); want %d", got, err, tc.want)
			}
			if strings.HasPrefix(tc.name, "-h") {
				if !strings.Contains(out.String(), "usage: yardstick-batch") || !strings.Contains(out.String(), "Exit status: 0 every record answered 200") || errOut.Len() != 0 {
					t.Errorf("stdout %q, stderr %q; want the usage with the exit statuses on stdout only", out.String(), errOut.String())
				}
			}
		})
	}
}

// TestCSVMeasureColumns: the CSV answer flattens a measure into its columns (numbers as the
// service wrote them), and a failed record's problems into exceptionType and error.
func TestCSVMeasureColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   []string // ability … error
	}{
		{"a measure", 200, `{"ability":277,"abilityDisplay":"275L","uncertainty":584,"framework":"lexile","apiVersion":"v"}`,
			[]string{"277", "275L", "584", "lexile", "", "", "", "", "", "", "", "", "", ""}},
		{"a forecast with a percentile", 200, `{"ability":695.301528293557,"abilityDisplay":"695L","uncertainty":93.42549931347037,"probabilities":[0.5,0.5],"framework":"lexile","percentile":61}`,
			[]string{"695.301528293557", "695L", "93.42549931347037", "lexile", "61", "", "", "", "", "", "", "", "", ""}},
		{"a negative ability", 200, `{"ability":-105,"abilityDisplay":"BR105L","uncertainty":224}`, []string{"-105", "BR105L", "224", "", "", "", "", "", "", "", "", "", "", ""}},
		{"no measure (a group)", 200, `{"forecasts":{"students":[]},"framework":"lexile"}`, []string{"", "", "", "lexile", "", "", "", "", "", "", "", "", "", ""}},
		{"a 400 with problems", 400, `{"message":"Invalid input.","exceptionType":"ValidationError","additionalInfo":"See validationErrors.","validationErrors":{"scaleSem":["is required"],"items":["items[0].id: unknown","items[1].id: unknown"]}}`,
			[]string{"", "", "", "", "", "", "", "", "", "", "", "", "ValidationError", "items: items[0].id: unknown; items: items[1].id: unknown; scaleSem: is required"}},
		{"a 404", 404, `{"message":"Not found.","exceptionType":"NotFound","additionalInfo":"No endpoint has this path."}`,
			[]string{"", "", "", "", "", "", "", "", "", "", "", "", "NotFound", "No endpoint has this path."}},
		{"a plan, reached", 200, `{"trajectory":[{"grade":4,"timeOfYear":"MOY","elapsedDays":365.25,"ability":600}],"reach":{"elapsedDays":1449,"ability":900.15,"abilityDisplay":"900L","uncertainty":164.2,"probability":0.5003,"grade":7,"timeOfYear":"MOY"},"peak":{"elapsedDays":1826,"probability":0.6192},"framework":"lexile"}`,
			[]string{"", "", "", "lexile", "", "1449", "7", "MOY", "900.15", "0.5003", "1826", "0.6192", "", ""}},
		{"a plan, never reached", 200, `{"trajectory":[],"reach":null,"peak":{"elapsedDays":0,"probability":0.01},"framework":"lexile"}`,
			[]string{"", "", "", "lexile", "", "", "", "", "", "", "0", "0.01", "", ""}},
		{"not JSON", 200, `oops`, []string{"", "", "", "", "", "", "", "", "", "", "", "", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := csvRow(7, "r", tc.status, []byte(tc.body))
			if len(row) != len(csvHeader) || row[0] != "7" || row[1] != "r" || row[3] != tc.body {
				t.Fatalf("got %q; want line 7, id r, the body as sent, %d columns", row, len(csvHeader))
			}
			if got := row[4:]; !slices.Equal(got, tc.want) {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}
