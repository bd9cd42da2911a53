package servetest

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unversioned blanks what may differ by design between builds on the same content: apiVersion
// (the build's) and the bundle's hash (the fingerprint of the files, which changes when the
// format gains a column).
var unversioned = regexp.MustCompile(`"(apiVersion|hash)":"[^"]*"`)

// signedToken stands for a page token's bytes, which carry an HMAC under the deployment's key and
// so differ between deployments by design; whether a page has a next token is still compared, and
// the catalog's own tests check what a token pages to.
var signedToken = regexp.MustCompile(`"nextPageToken":"[^"]+"`)

// normalized is an answer line with what may differ by design blanked.
func normalized(line []byte) []byte {
	line = unversioned.ReplaceAll(line, []byte(`"$1":""`))
	return signedToken.ReplaceAll(line, []byte(`"nextPageToken":"(signed)"`))
}

// CheckCorpus sends every request of dir/requests.txt (PATH<TAB>BODY a line; a body "NDJSON …"
// with \n for newlines is a stream) and holds each answer, status and body with apiVersion, the
// bundle hash and page tokens blanked, to its line of dir/answers.txt, or first rewrites that file with update.
func (s *Server) CheckCorpus(t *testing.T, dir string, update bool) {
	t.Helper()
	raw, err := os.ReadFile(dir + "/requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, body, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("request line %q has no tab", line)
		}
		var r Response
		if strings.HasPrefix(body, "NDJSON ") {
			r = s.Batch(path, strings.ReplaceAll(strings.TrimPrefix(body, "NDJSON "), `\n`, "\n"))
		} else {
			r = s.Post(path, body)
		}
		b := normalized(bytes.TrimSpace(r.Body))
		got = append(got, strconv.Itoa(r.Status)+"\t"+strings.ReplaceAll(string(b), "\n", `\n`))
	}
	answers := dir + "/answers.txt"
	if update {
		if err := os.WriteFile(answers, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(answers)
	if err != nil {
		t.Fatalf("%v (run go test -update-demo on the build that sets the answers)", err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		want = append(want, string(normalized(sc.Bytes())))
	}
	if len(want) != len(got) {
		t.Fatalf("got %d answers; want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("request %d: got\n%s\nwant\n%s", i+1, got[i], want[i])
		}
	}
}
