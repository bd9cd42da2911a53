package servetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
)

// Batch sends an NDJSON body to a stream path (issue 21) with the demo client's token.
func (s *Server) Batch(path, body string) Response {
	s.t.Helper()
	return s.Do(http.MethodPost, path, "application/x-ndjson", body, "Authorization", "Bearer "+s.Token())
}

// BatchAnswer is one answer line of a batch: a record's (ID set) or a broken line's (Line set).
type BatchAnswer struct {
	ID     string
	Line   int
	Status int
	Body   []byte // the answer's body, as written
}

// ParseBatch splits a batch answer into its answer lines and its summary (nil when the stream
// ended without one). A record's body is taken as the bytes written, not re-encoded.
func ParseBatch(t testing.TB, body []byte) (answers []BatchAnswer, summary map[string]int) {
	t.Helper()
	for line := range bytes.Lines(body) {
		line = bytes.TrimRight(line, "\n")
		var head struct {
			ID      *string         `json:"id"`
			Line    int             `json:"line"`
			Status  int             `json:"status"`
			Body    json.RawMessage `json:"body"`
			Summary map[string]int  `json:"summary"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			t.Fatalf("answer line is not JSON: %v\n%s", err, line)
		}
		if head.Summary != nil {
			summary = head.Summary
			continue
		}
		i := bytes.Index(line, []byte(`,"body":`))
		if i < 0 || line[len(line)-1] != '}' {
			t.Fatalf("answer line without a body: %s", line)
		}
		a := BatchAnswer{Line: head.Line, Status: head.Status, Body: line[i+len(`,"body":`) : len(line)-1]}
		if head.ID != nil {
			a.ID = *head.ID
		}
		answers = append(answers, a)
	}
	return answers, summary
}

// Request is one request of a differential test: a path and its JSON body.
type Request struct {
	Path string
	Body []byte
}

// GenerateRequests makes n requests from seeds (valid bodies by path) and mutations of them: a
// field dropped, a field of the wrong type or out of range, an unknown field, an element of a
// list changed; paths also include others (not paths of the service: answered 404 in a batch).
// The same r gives the same requests.
func GenerateRequests(r *rand.Rand, n int, seeds map[string][]string, others []string) []Request {
	paths := make([]string, 0, len(seeds))
	for p := range seeds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	wrong := []any{"x", -1, 0, 1e9, 2.5, nil, true, []any{}, map[string]any{}, []any{1, "a"}, "540", -1e300}
	out := make([]Request, 0, n)
	for len(out) < n {
		path := paths[r.IntN(len(paths))]
		list := seeds[path]
		var body map[string]any
		d := json.NewDecoder(bytes.NewReader([]byte(list[r.IntN(len(list))])))
		d.UseNumber()
		if err := d.Decode(&body); err != nil {
			panic(fmt.Sprintf("seed of %s: %v", path, err))
		}
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		switch k := r.IntN(10); {
		case k < 4: // valid as it is
		case k == 4 && len(keys) > 0:
			delete(body, keys[r.IntN(len(keys))])
		case k == 5 || k == 6:
			if len(keys) > 0 {
				body[keys[r.IntN(len(keys))]] = wrong[r.IntN(len(wrong))]
			}
		case k == 7:
			body["unknownField"+strconv.Itoa(r.IntN(3))] = 1
		case k == 8:
			for _, key := range keys {
				if l, ok := body[key].([]any); ok && len(l) > 0 {
					l[r.IntN(len(l))] = wrong[r.IntN(len(wrong))]
					break
				}
			}
		default:
			if len(others) > 0 && r.IntN(2) == 0 {
				path = others[r.IntN(len(others))]
			}
		}
		b, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		out = append(out, Request{Path: path, Body: b})
	}
	return out
}

// BatchBody is the NDJSON body of requests as records with ids "r0", "r1", ...
func BatchBody(reqs []Request) []byte {
	var b bytes.Buffer
	for i, q := range reqs {
		fmt.Fprintf(&b, `{"id":"r%d","path":%q,"body":%s}`+"\n", i, q.Path, q.Body)
	}
	return b.Bytes()
}

// Unary answers each request with a unary call of its path (several at once), as a batch
// record's answer is compared with: status and body.
func (s *Server) Unary(reqs []Request) []Response {
	s.t.Helper()
	tok := s.Token()
	out := make([]Response, len(reqs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				out[i] = s.Do(http.MethodPost, reqs[i].Path, "application/json", string(reqs[i].Body), "Authorization", "Bearer "+tok)
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// CheckBatchDifferential sends reqs as one batch to batchPath and checks that every record is
// answered exactly as a unary call of its path (status and body bytes, in order, with its id),
// a path in foreign with a 404 (its own where a call of it answers 404, else notFoundPath's),
// that the summary counts them, and that the mix of statuses is varied enough to mean something
// (a quarter 200, a tenth 400, a fiftieth 404).
func (s *Server) CheckBatchDifferential(t *testing.T, batchPath, notFoundPath string, reqs []Request, foreign []string) {
	t.Helper()
	n := len(reqs)
	unary := s.Unary(reqs)
	notFound := s.Post(notFoundPath, `{}`)
	got := s.Batch(batchPath, string(BatchBody(reqs)))
	if got.Status != http.StatusOK || got.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("batch: %d %s\n%.500s", got.Status, got.Header.Get("Content-Type"), got.Body)
	}
	answers, summary := ParseBatch(t, got.Body)
	if len(answers) != n {
		t.Fatalf("%d answers for %d records", len(answers), n)
	}
	ok, statuses, failures := 0, map[int]int{}, 0
	for i, a := range answers {
		want := unary[i]
		if a.ID != "r"+strconv.Itoa(i) {
			t.Fatalf("answer %d has id %q", i, a.ID)
		}
		// A foreign record is answered 404: the path's own 404 where a call of it is one (the
		// other service's path names that service), else the not-found body.
		if slices.Contains(foreign, reqs[i].Path) && want.Status != http.StatusNotFound {
			want = notFound
		}
		if a.Status != want.Status || !bytes.Equal(a.Body, bytes.TrimRight(want.Body, "\n")) {
			t.Errorf("record %d %s %s:\nbatch %d %s\nunary %d %s", i, reqs[i].Path, reqs[i].Body, a.Status, a.Body, want.Status, want.Body)
			if failures++; failures > 20 {
				t.FailNow()
			}
		}
		statuses[a.Status]++
		if a.Status == http.StatusOK {
			ok++
		}
	}
	if summary["records"] != n || summary["ok"] != ok || summary["failed"] != n-ok {
		t.Errorf("summary %v; want %d records, %d ok", summary, n, ok)
	}
	t.Logf("%d records: statuses %v", n, statuses)
	if statuses[200] < n/4 || statuses[400] < n/10 || statuses[404] < n/50 {
		t.Errorf("the mix is not varied enough: %v", statuses)
	}
}
