package calltest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestDo: the request carries the method, content type, headers and body given, and the answer
// comes back whole.
func TestDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Got", r.Method+"|"+r.Header.Get("Content-Type")+"|"+r.Header.Get("X-One")+"|"+r.Header.Get("X-Two"))
		w.WriteHeader(http.StatusTeapot)
		w.Write(append([]byte("echo:"), body...))
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, method, ctype string
		header              []string
		want                string
	}{
		{"all given", http.MethodPut, "text/plain", []string{"X-One", "1", "X-Two", "2"}, "PUT|text/plain|1|2"},
		{"no content type, an odd header left out", http.MethodPost, "", []string{"X-One", "1", "X-Two"}, "POST||1|"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Do(t, tc.method, srv.URL+"/x", tc.ctype, "hi", tc.header...)
			if r.Status != http.StatusTeapot || string(r.Body) != "echo:hi" || r.Header.Get("X-Got") != tc.want {
				t.Errorf("got %d %q, X-Got %q; want 418 \"echo:hi\", %q", r.Status, r.Body, r.Header.Get("X-Got"), tc.want)
			}
		})
	}
}

// TestWaitFor: it returns once cond holds, polling until then.
func TestWaitFor(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	start := time.Now()
	WaitFor(t, "the third poll", func() bool { return n.Add(1) == 3 })
	if n.Load() != 3 || time.Since(start) < 10*time.Millisecond {
		t.Errorf("got %d polls in %s; want 3, 5 ms apart", n.Load(), time.Since(start))
	}
}

// TestObject: a JSON object comes back as a map; anything else fails the test.
func TestObject(t *testing.T) {
	t.Parallel()
	if got := (Response{Body: []byte(`{"a":1}`)}).Object(t); len(got) != 1 || got["a"] != 1.0 {
		t.Errorf("got %v; want map[a:1]", got)
	}
	for _, body := range []string{`[1]`, `{"a":`, ``} {
		ft := &fatalT{TB: t}
		func() {
			defer func() { recover() }() // fatalT.Fatalf stops Object as t.Fatalf would
			Response{Body: []byte(body)}.Object(ft)
		}()
		if !ft.failed {
			t.Errorf("%q: got a map; want the test failed", body)
		}
	}
}

// fatalT records a Fatalf and stops the caller by panicking.
type fatalT struct {
	testing.TB
	failed bool
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
