package httpfront

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestErrorBodiesQuoteLittle: an error body counts the problems it does not list,
// quotes at most 64 bytes of any input, says what is wrong with a key that is not UTF-8, and stays
// small for a body nested 10,000 deep.
func TestErrorBodiesQuoteLittle(t *testing.T) {
	t.Parallel()
	s := startFront(t, defaultGrace, defaultRate)
	tok := s.bearer(t, "caller")
	unknownKeys := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"text":"ok","items":[{"id":"ok","result":1}]`)
		for i := range n {
			fmt.Fprintf(&b, `,"u%d":1`, i)
		}
		return b.String() + "}"
	}
	k64 := strings.Repeat("k", 64)
	for _, tc := range []struct {
		name    string
		body    string
		key     string // validationErrors key to look at
		want    []string
		maxSize int // bytes of the whole answer
	}{
		{"100 problems: all listed", unknownKeys(100), "nonFieldErrors", nil, 0},
		{"101 problems: one not listed", unknownKeys(101), "nonFieldErrors", []string{"1 more problems not listed"}, 0},
		{"5,000 problems: 4,900 not listed", unknownKeys(5000), "nonFieldErrors", []string{"4900 more problems not listed"}, 0},
		{"key of almost 1 MiB (the body limit)", `{"` + strings.Repeat("k", 1<<20-16) + `":1}`, k64 + "…", []string{`unknown field "` + k64 + `…" (1048560 bytes; the first 64 shown)`}, 400},
		{"key not UTF-8", "{\"items\":[{\"id\":\"ok\",\"result\":1}],\"\xff\xfe\":1}", "\ufffd", []string{"unknown field \"\ufffd\": a field name must be valid UTF-8 text"}, 0},
		{"key not UTF-8 in an element", "{\"items\":[{\"id\":\"ok\",\"result\":1,\"\xffa\":2}]}", "items", []string{"items[0].\ufffda: unknown field \"\ufffda\": a field name must be valid UTF-8 text"}, 0},
		{"nested 10,000 deep", `{"items":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, "nonFieldErrors", []string{"request body is not valid JSON: arrays and objects nest too deeply"}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.post(t, echoPath, tc.body, "Authorization", tok)
			if r.status != http.StatusBadRequest || !utf8.Valid(r.body) {
				t.Fatalf("got %d, valid UTF-8 %v; want 400 in valid text", r.status, utf8.Valid(r.body))
			}
			b := errorBody(t, r)
			if len(b.ValidationErrors) == 0 {
				t.Fatalf("got %.300s; want validationErrors", r.body)
			}
			if got := b.ValidationErrors[tc.key]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("validationErrors[%q]: got %.300q; want %q", tc.key, got, tc.want)
			}
			if tc.maxSize > 0 && len(r.body) > tc.maxSize {
				t.Errorf("answer: got %d bytes; want at most %d", len(r.body), tc.maxSize)
			}
		})
	}
}

// TestContentEncodingIs415: a body with a content coding is refused 415 with Accept-Encoding:
// identity, on the API and at /authToken (it was a 400 "not valid JSON"); identity is no coding;
// credentials are still checked first.
func TestContentEncodingIs415(t *testing.T) {
	t.Parallel()
	s := startFront(t, defaultGrace, defaultRate)
	tok := s.bearer(t, "caller")
	body := `{"text":"ok"}`
	login := `{"clientId":"caller","clientSecret":"` + clientSecret + `"}`
	for _, tc := range []struct {
		name, path, body, encoding, auth string
		want                             int
	}{
		{"gzip", echoPath, body, "gzip", tok, http.StatusUnsupportedMediaType},
		{"br", echoPath, body, "br", tok, http.StatusUnsupportedMediaType},
		{"identity then gzip", echoPath, body, "identity, gzip", tok, http.StatusUnsupportedMediaType},
		{"identity", echoPath, body, "identity", tok, http.StatusOK},
		{"IDENTITY", echoPath, body, "IDENTITY", tok, http.StatusOK},
		{"none", echoPath, body, "", tok, http.StatusOK},
		{"gzip without a token: credentials first", echoPath, body, "gzip", "", http.StatusUnauthorized},
		{"gzip at /authToken", "/authToken", login, "gzip", "", http.StatusUnsupportedMediaType},
		{"identity at /authToken", "/authToken", login, "identity", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var header []string
			if tc.encoding != "" {
				header = append(header, "Content-Encoding", tc.encoding)
			}
			if tc.auth != "" {
				header = append(header, "Authorization", tc.auth)
			}
			r := s.post(t, tc.path, tc.body, header...)
			if r.status != tc.want {
				t.Fatalf("got %d %s; want %d", r.status, r.body, tc.want)
			}
			if tc.want != http.StatusUnsupportedMediaType {
				return
			}
			if b := errorBody(t, r); b.ExceptionType != rpcerr.ExceptionUnsupportedType || !strings.Contains(b.AdditionalInfo, "Content-Encoding") {
				t.Errorf("got %+v; want UnsupportedMediaType naming Content-Encoding", b)
			}
			if got := r.header.Get("Accept-Encoding"); got != "identity" {
				t.Errorf("Accept-Encoding: got %q; want identity", got)
			}
		})
	}
}
