package batch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

func TestOrderUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{Workers: 1, InFlight: 1}, {Workers: 8, InFlight: 16}, {Workers: 16, InFlight: 64}} {
		t.Run(fmt.Sprintf("workers=%d,inflight=%d", o.Workers, o.InFlight), func(t *testing.T) {
			t.Parallel()
			srv, done := server(t, (&fake{}).Dispatch, o)
			r := rand.New(rand.NewPCG(1, uint64(o.Workers)))
			var body strings.Builder
			var ids []string
			for i := range 300 {
				// Later records often finish first: only the engine's ordering puts them back.
				id := strconv.Quote(fmt.Sprintf("r%d", i))
				if i%7 == 0 {
					id = `"dup"` // ids need not be unique
				}
				ids = append(ids, id)
				body.WriteString(rec(id, "/slow", fmt.Sprintf(`{"ms": %d, "i": %d}`, r.IntN(4), i)))
			}
			got := post(t, srv.URL, body.String())
			if len(got) != 301 {
				t.Fatalf("%d lines; want 300 answers and the summary", len(got))
			}
			for i, line := range got[:300] {
				want := fmt.Sprintf(`{"id":%s,"status":200,"body":{"path":"/slow","echo":{"ms": %d, "i": %d}}}`, ids[i], 0, i)
				a := decode(t, line)
				// The body is the dispatcher's bytes, spaces and all.
				if string(a.ID) != ids[i] || !strings.HasSuffix(line, fmt.Sprintf(`, "i": %d}}}`, i)) || a.Status != 200 {
					t.Fatalf("line %d = %s; want the answer of record %d, like %s", i, line, i, want)
				}
			}
			if got[300] != `{"summary":{"records":300,"ok":300,"failed":0}}` {
				t.Errorf("summary %s", got[300])
			}
			res := wait(t, done, 5e9, "Serve's result")
			if res.err != nil || !res.counts.Complete || res.counts.Records != 300 || res.counts.Lines != 300 {
				t.Errorf("Serve = %+v, %v", res.counts, res.err)
			}
		})
	}
}

// The answer bytes are the dispatcher's and the id is the caller's spelling, byte for byte.
func TestAnswerBytes(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, (&fake{}).Dispatch, Options{})
	got := post(t, srv.URL,
		`{"body": {"b" : [1, 2.50, "\u00e9"]}, "path":"/echo", "id":"a\u00e9\"\\ é"}`+"\n"+
			rec(`""`, "/bad", `{}`)+
			rec(`"x"`, "/nowhere", `{}`)+
			rec(`"p"`, "/panic", `{}`)+
			rec(`"y"`, "/echo", `{}`))
	_, bad := ErrorAnswer(rpcerr.Invalid("x", "must be %d", 1))
	want := []string{
		`{"id":"a\u00e9\"\\ é","status":200,"body":{"path":"/echo","echo":{"b" : [1, 2.50, "\u00e9"]}}}`,
		`{"id":"","status":400,"body":` + string(bad) + `}`,
		`{"id":"x","status":404,"body":` + string(statusAnswer(404)) + `}`,
		`{"id":"p","status":500,"body":` + string(internalBody) + `}`,
		`{"id":"y","status":200,"body":{"path":"/echo","echo":{}}}`,
		`{"summary":{"records":5,"ok":2,"failed":3}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !bytes.Contains(bad, []byte(`"validationErrors":{"x":["must be 1"]}`)) {
		t.Errorf("the 400 body %s is not the documented one", bad)
	}
}

// Every kind of broken line of the design, each answered by its line number with the service's
// 400 body naming what is wrong, and the stream going on after it.
func TestBrokenLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, line string
		key, says  string // validationErrors key and a piece of its message
	}{
		{"not JSON", `{"id": "a", "path": `, rpcerr.NonFieldErrors, "not JSON"},
		{"trailing data", `{"id":"a","path":"/echo","body":{}} {}`, rpcerr.NonFieldErrors, "not JSON"},
		{"an array", `["a", "/echo", {}]`, rpcerr.NonFieldErrors, "not a record"},
		{"a string", `"a"`, rpcerr.NonFieldErrors, "not a record"},
		{"id missing", `{"path":"/echo","body":{}}`, "id", "is required"},
		{"id a number", `{"id":7,"path":"/echo","body":{}}`, "id", "must be a JSON string"},
		{"id null", `{"id":null,"path":"/echo","body":{}}`, "id", "must be a JSON string"},
		{"id not UTF-8", "{\"id\":\"\xff\",\"path\":\"/echo\",\"body\":{}}", "id", "UTF-8"},
		{"path missing", `{"id":"a","body":{}}`, "path", "is required"},
		{"path not a string", `{"id":"a","path":["/echo"],"body":{}}`, "path", "must be a JSON string"},
		{"body missing", `{"id":"a","path":"/echo"}`, "body", "is required"},
		{"body an array", `{"id":"a","path":"/echo","body":[]}`, "body", "must be a JSON object"},
		{"body a string", `{"id":"a","path":"/echo","body":"{}"}`, "body", "must be a JSON object"},
		{"unknown field", `{"id":"a","pth":"/echo","path":"/echo","body":{}}`, "pth", `unknown field "pth"; did you mean "path"?`},
		{"duplicate field", `{"id":"a","id":"b","path":"/echo","body":{}}`, "id", `duplicate field "id"`},
		{"byte-order mark opening a later line", "\xEF\xBB\xBF" + `{"id":"a","path":"/echo","body":{}}`, rpcerr.NonFieldErrors,
			"the line holds a byte-order mark (U+FEFF, bytes EF BB BF) at byte 0: only the stream's first line may start with one"},
		{"byte-order mark inside a line", `{"id":"a",` + "\xEF\xBB\xBF" + `"path":"/echo","body":{}}`, rpcerr.NonFieldErrors, "byte-order mark (U+FEFF, bytes EF BB BF) at byte 10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, (&fake{}).Dispatch, Options{})
			got := post(t, srv.URL, rec(`"before"`, "/echo", `{}`)+"\n"+c.line+"\n"+rec(`"after"`, "/echo", `{}`))
			if len(got) != 4 {
				t.Fatalf("%d lines %q; want before, the broken line, after, summary", len(got), got)
			}
			a := decode(t, got[1])
			if a.Line != 3 || a.Status != 400 || a.ID != nil {
				t.Fatalf("answer %s; want line 3 (a blank line counts), status 400, no id", got[1])
			}
			var body rpcerr.ErrorBody
			if err := json.Unmarshal(a.Body, &body); err != nil {
				t.Fatal(err)
			}
			msgs := strings.Join(body.ValidationErrors[c.key], " | ")
			if body.Message != rpcerr.MsgInvalid || body.ExceptionType != rpcerr.ExceptionValidation || !strings.Contains(msgs, c.says) {
				t.Errorf("body %s; want a ValidationError with %q under %q", a.Body, c.says, c.key)
			}
			// The body is the one rpcerr.Write writes for the same problems.
			var p rpcerr.Problems
			for k, ms := range body.ValidationErrors {
				for _, m := range ms {
					if k == rpcerr.NonFieldErrors {
						k = ""
					}
					p.Add(k, "%s", m)
				}
			}
			if _, want := ErrorAnswer(p.Err()); len(body.ValidationErrors) == 1 && !bytes.Equal(a.Body, want) {
				t.Errorf("body %s; want rpcerr's %s", a.Body, want)
			}
			if decode(t, got[2]).Status != 200 || got[3] != `{"summary":{"records":3,"ok":2,"failed":1}}` {
				t.Errorf("after the broken line: %s, %s", got[2], got[3])
			}
		})
	}
}

// A 413 states the limit the stream was given, not the default: MaxLine 1000 takes a line of
// 1000 bytes and answers one of 1001 naming 1000 bytes.
func TestLineLimitStated(t *testing.T) {
	t.Parallel()
	const max = 1000
	line := func(n int) string {
		head, tail := `{"id":"a","path":"/echo","body":{"pad":"`, `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	srv, _ := server(t, (&fake{}).Dispatch, Options{MaxLine: max})
	got := post(t, srv.URL, line(max)+"\n"+line(max+1)+"\n")
	if len(got) != 3 {
		t.Fatalf("got %d lines %q; want 2 answers and the summary", len(got), got)
	}
	if a := decode(t, got[0]); a.Status != 200 {
		t.Errorf("a line of %d bytes: got status %d; want 200", max, a.Status)
	}
	a := decode(t, got[1])
	want := `{"message":"Request too large.","exceptionType":"RequestTooLarge","additionalInfo":"The line exceeds the size limit of 1000 bytes."}`
	if a.Status != 413 || a.Line != 2 || string(a.Body) != want {
		t.Errorf("a line of %d bytes: got %d at line %d, %s; want 413 at line 2, %s", max+1, a.Status, a.Line, a.Body, want)
	}
}

// A line of exactly MaxLine bytes is a record; one byte more is a 413 by line number, skipped to
// its newline, and the stream goes on. Both line endings, and a last line without one.
func TestLineLimit(t *testing.T) {
	t.Parallel()
	const max = 1 << 20
	// padded is a record line of exactly n bytes (without its newline).
	padded := func(id string, n int) string {
		head := `{"id":"` + id + `","path":"/echo","body":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	cases := []struct {
		name     string
		body     string
		statuses []string // per answer: "200" or "413@line"
	}{
		{"1 MiB", padded("a", max) + "\n", []string{"200"}},
		{"1 MiB + 1", padded("a", max+1) + "\n", []string{"413@1"}},
		{"1 MiB with CRLF", padded("a", max) + "\r\n", []string{"200"}},
		{"1 MiB + 1 with CRLF", padded("a", max+1) + "\r\n", []string{"413@1"}},
		{"1 MiB, last, no newline", rec(`"z"`, "/echo", `{}`) + padded("a", max), []string{"200", "200"}},
		{"1 MiB + 1, last, no newline", rec(`"z"`, "/echo", `{}`) + padded("a", max+1), []string{"200", "413@2"}},
		{"3 MiB between records", rec(`"z"`, "/echo", `{}`) + "\n" + padded("a", 3*max) + "\n" + rec(`"y"`, "/echo", `{}`), []string{"200", "413@3", "200"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, (&fake{}).Dispatch, Options{})
			got := post(t, srv.URL, c.body)
			if len(got) != len(c.statuses)+1 {
				t.Fatalf("%d lines; want %d answers and the summary", len(got), len(c.statuses))
			}
			for i, want := range c.statuses {
				a := decode(t, got[i])
				status := strconv.Itoa(a.Status)
				if a.Status == 413 {
					status += "@" + strconv.Itoa(a.Line)
					if want := `{"message":"Request too large.","exceptionType":"RequestTooLarge","additionalInfo":"The line exceeds the size limit of 1048576 bytes (1 MiB)."}`; string(a.Body) != want {
						t.Errorf("413 body %s; want %s", a.Body, want)
					}
				}
				if status != want {
					t.Errorf("answer %d: %s; want %s", i, status, want)
				}
			}
		})
	}
}

// The limit is a parameter: both sides of a small one, to check the off-by-ones cheaply.
func TestLineReaderBoundary(t *testing.T) {
	t.Parallel()
	for max := 1; max < 6; max++ {
		for n := 0; n < 9; n++ {
			for _, end := range []string{"\n", "\r\n", ""} {
				in := strings.Repeat("a", n) + end + "b\n"
				lr := NewLineReader(strings.NewReader(in), max)
				line, num, tooLong, err := lr.Next()
				if err != nil || num != 1 || tooLong != (n > max) || (!tooLong && string(line) != strings.Repeat("a", n)) {
					if !(end == "" && err == nil) { // without a newline "a…ab" is one line
						t.Errorf("max %d, %q: %q %d %v %v", max, in, line, num, tooLong, err)
					}
				}
				if end == "" {
					continue
				}
				line, num, tooLong, err = lr.Next()
				if err != nil || num != 2 || tooLong != (max < 1) || string(line) != "b" {
					t.Errorf("max %d, %q, second line: %q %d %v %v", max, in, line, num, tooLong, err)
				}
			}
		}
	}
}

// TestByteOrderMark: a byte-order mark opening the stream is skipped (the first record is
// answered as without it); one inside a string is text, echoed as sent.
func TestByteOrderMark(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, (&fake{}).Dispatch, Options{})
	got := post(t, srv.URL, "\xEF\xBB\xBF"+rec(`"first"`, "/echo", `{}`)+"\r\n"+rec(`"\ufeffsecond"`, "/echo", `{}`)+"\n")
	if len(got) != 3 || got[2] != `{"summary":{"records":2,"ok":2,"failed":0}}` {
		t.Fatalf("got %q; want two records answered 200 and the summary", got)
	}
	if a := decode(t, got[0]); a.Status != 200 || string(a.ID) != `"first"` {
		t.Errorf("first answer %s; want id \"first\" answered 200", got[0])
	}
	if a := decode(t, got[1]); a.Status != 200 || string(a.ID) != `"\ufeffsecond"` {
		t.Errorf("second answer %s; want its id as sent", got[1])
	}
}

// TestLineReaderByteOrderMark: only the first line loses a byte-order mark.
func TestLineReaderByteOrderMark(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, first, second string }{
		{"\xEF\xBB\xBFa\n\xEF\xBB\xBFb\n", "a", "\xEF\xBB\xBFb"},
		{"\xEF\xBB\xBF\nb\n", "", "b"},
		{"a\xEF\xBB\xBF\nb", "a\xEF\xBB\xBF", "b"},
		{"\xEF\xBBa\nb", "\xEF\xBBa", "b"},
	} {
		lr := NewLineReader(strings.NewReader(tc.in), 100)
		first, _, _, err1 := lr.Next()
		f := string(first)
		second, _, _, err2 := lr.Next()
		if err1 != nil || err2 != nil || f != tc.first || string(second) != tc.second {
			t.Errorf("%q: got %q, %q (%v, %v); want %q, %q", tc.in, f, second, err1, err2, tc.first, tc.second)
		}
	}
}

func TestBlankLinesAndSummary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       []string
	}{
		{"empty body", "", []string{`{"summary":{"records":0,"ok":0,"failed":0}}`}},
		{"only blank lines", "\n \n\t\r\n\n", []string{`{"summary":{"records":0,"ok":0,"failed":0}}`}},
		{"blank lines counted, not answered", "\n\n" + rec(`"a"`, "/bad", `{}`) + "  \n" + "oops\n" + rec(`"b"`, "/echo", `{}`) + "\n",
			[]string{`"a" 400`, `@5 400`, `"b" 200`, `{"summary":{"records":3,"ok":1,"failed":2}}`}},
		{"CRLF lines", rec(`"a"`, "/echo", `{}`)[:len(rec(`"a"`, "/echo", `{}`))-1] + "\r\n\r\n" + rec(`"b"`, "/echo", `{}`),
			[]string{`"a" 200`, `"b" 200`, `{"summary":{"records":2,"ok":2,"failed":0}}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, done := server(t, (&fake{}).Dispatch, Options{})
			got := post(t, srv.URL, c.body)
			var short []string
			for _, line := range got {
				if strings.HasPrefix(line, `{"summary"`) {
					short = append(short, line)
					continue
				}
				a := decode(t, line)
				if a.ID != nil {
					short = append(short, fmt.Sprintf("%s %d", a.ID, a.Status))
				} else {
					short = append(short, fmt.Sprintf("@%d %d", a.Line, a.Status))
				}
			}
			if strings.Join(short, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("answers %q; want %q", short, c.want)
			}
			res := wait(t, done, 5e9, "Serve")
			if !res.counts.Complete || res.err != nil {
				t.Errorf("Serve = %+v, %v", res.counts, res.err)
			}
		})
	}
}

// The head is sent before any record, and each answer while the body is still open: a caller
// that writes one record and waits reads its answer before it sends the next.
func TestAnswersWhileBodyOpen(t *testing.T) {
	t.Parallel()
	srv, done := server(t, (&fake{}).Dispatch, Options{})
	d := openDuplex(t, srv.URL)
	if d.resp.StatusCode != http.StatusOK {
		t.Fatalf("head %d", d.resp.StatusCode)
	}
	for i := range 5 {
		d.send(t, rec(strconv.Quote(strconv.Itoa(i)), "/echo", `{}`))
		if a := decode(t, d.next(t)); string(a.ID) != strconv.Quote(strconv.Itoa(i)) {
			t.Fatalf("answer %d: %s", i, a.ID)
		}
		if i == 2 {
			d.send(t, "\n\nnot json\n")
			if a := decode(t, d.next(t)); a.Line != 6 || a.Status != 400 {
				t.Fatalf("broken line answered %+v; want line 6, 400", a)
			}
		}
	}
	d.body.Close()
	if s := d.next(t); s != `{"summary":{"records":6,"ok":5,"failed":1}}` {
		t.Errorf("summary %s", s)
	}
	if res := wait(t, done, 5e9, "Serve"); !res.counts.Complete || res.counts.Lines != 8 {
		t.Errorf("Serve = %+v, %v", res.counts, res.err)
	}
}
