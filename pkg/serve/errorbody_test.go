package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestErrorBodiesQuoteLittle (issue 19): an error body counts the problems it does not list,
// quotes at most 64 bytes of any input, says what is wrong with a key that is not UTF-8, and stays
// small for a body nested 10,000 deep.
func TestErrorBodiesQuoteLittle(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
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
			r := h.post(throwawayPath, tc.body, "Authorization", tok)
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
	h := startTest(t, testConfig(t))
	tok := "Bearer " + h.token("demo", "demo-secret")
	body := `{"text":"ok"}`
	login := `{"clientId":"demo","clientSecret":"demo-secret"}`
	for _, tc := range []struct {
		name, path, body, encoding, auth string
		want                             int
	}{
		{"gzip", throwawayPath, body, "gzip", tok, http.StatusUnsupportedMediaType},
		{"br", throwawayPath, body, "br", tok, http.StatusUnsupportedMediaType},
		{"identity then gzip", throwawayPath, body, "identity, gzip", tok, http.StatusUnsupportedMediaType},
		{"identity", throwawayPath, body, "identity", tok, http.StatusOK},
		{"IDENTITY", throwawayPath, body, "IDENTITY", tok, http.StatusOK},
		{"none", throwawayPath, body, "", tok, http.StatusOK},
		{"gzip without a token: credentials first", throwawayPath, body, "gzip", "", http.StatusUnauthorized},
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
			r := h.post(tc.path, tc.body, header...)
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

// TestHeaderTooLargeIsJSON (issue 19): a request whose header is over the limit (64 KiB, and
// net/http's 4 KiB of slack) is answered 431 with the documented JSON body, not net/http's plain
// text; a header under the limit reaches the API.
func TestHeaderTooLargeIsJSON(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	addr := strings.TrimPrefix(h.base, "http://")
	for _, tc := range []struct {
		name   string
		header int // bytes of one X-Big header's value
		want   int
	}{
		{"60 KiB header", 60 << 10, http.StatusUnauthorized}, // reaches the API: no token
		{"70 KiB header", 70 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB header", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			go func() { // the server may answer before it has read it all
				_, _ = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\nContent-Length: 2\r\n\r\n{}", throwawayPath, strings.Repeat("a", tc.header))
			}()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("read the answer: %v", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("got %d %s; want %d", resp.StatusCode, body, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q; want application/json", ct)
			}
			var b rpcerr.ErrorBody
			if err := json.Unmarshal(body, &b); err != nil || b.ExceptionType == "" || b.Message == "" {
				t.Fatalf("body %q: got %+v, %v; want the error body", body, b, err)
			}
			if tc.want == http.StatusRequestHeaderFieldsTooLarge && (b.ExceptionType != rpcerr.ExceptionTooLarge || !resp.Close) {
				t.Errorf("got %+v, Connection: close %v; want RequestTooLarge and the connection closed", b, resp.Close)
			}
		})
	}
}
