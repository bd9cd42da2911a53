package scoring

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestFrontHandlerAllocations pins what the JSON front allocates for make bench-e2e's request
// (40 difficulties, Bayes) in-process, from the handler's entry to the answer written: the
// request and the writer are reused, so the count is the server's own. It was 87 before the
// chain's closures, the tracing event's attribute, the body's decoder and info, the answer's
// buffer and the request line's pieces were cut (72), before the front skipped the gateway's
// pattern search (53), and before the gateway called the in-process channel, which hands the
// request to the chain with the call and method description taken once (50). The chain's
// closures came back (52): the walker that replaced them saved no measurable CPU. The front
// calling each route's rpc itself, decoding into the channel's request, took it to 23. A new
// allocation a call fails here.
func TestFrontHandlerAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := benchServer(t)
	body := difficulties40()
	req := httptest.NewRequest(http.MethodPost, "/api/score/items/difficulties/bayes", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.ContentLength = int64(len(body))
	in := &rewindBody{}
	w := &countingWriter{header: http.Header{}}
	serve := func() {
		in.Reset(body)
		req.Body = in
		w.status, w.n = 0, 0
		s.Handler.ServeHTTP(w, req)
		if w.status != http.StatusOK || w.n == 0 {
			t.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
	serve() // the decoder's chunks and the token's cache entry are made once
	const ceiling = 23
	if n := testing.AllocsPerRun(200, serve); n > ceiling {
		t.Errorf("%v allocations a call; want at most %d", n, ceiling)
	} else {
		t.Logf("%v allocations a call", n)
	}
}

// rewindBody is a request body that can be read again.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// countingWriter is an http.ResponseWriter that keeps the status and counts the bytes.
type countingWriter struct {
	header http.Header
	status int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(b)
	return len(b), nil
}
