// Package calltest makes the calls a test makes of a server it runs: one HTTP request with its
// answer read whole (Do), and a wait for a state the server reaches on its own (WaitFor). It is
// for tests only; the frame's tests, its internal packages' and the services' harness
// (services/servetest) share this one copy.
package calltest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Response is an HTTP answer, its body read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Object is the body as a JSON object; a body that is not one fails the test.
func (r Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Do sends method url with body, labelled contentType ("": no Content-Type), and the headers
// given as name, value pairs; a request that gets no answer fails the test.
func Do(t testing.TB, method, url, contentType, body string, header ...string) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// WaitFor polls cond every 5 ms for up to 5 s and fails the test, naming what it waited for,
// if cond never holds: for what a server does just after its answer (a slot given back once
// gRPC ends a call, after the caller has its answer).
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
