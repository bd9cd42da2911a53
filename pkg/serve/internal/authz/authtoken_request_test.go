package authz

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// basic is an HTTP Basic header as RFC 6749 §2.3.1 writes it: each part form-urlencoded first.
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func TestBasicCredentials(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name, header, id, secret string
		ok, err                  bool
	}{
		{"form-urlencoded parts", basic("a b+c:d", "p%&:=x"), "a b+c:d", "p%&:=x", true, false},
		{"plus is a space", enc("a+b:c+d"), "a b", "c d", true, false},
		{"lower-case scheme", strings.Replace(basic("demo", "s"), "Basic", "basic", 1), "demo", "s", true, false},
		{"empty secret", enc("demo:"), "demo", "", true, false},
		{"bearer is not basic", "Bearer abc", "", "", false, false},
		{"no colon", enc("demo"), "", "", true, true},
		{"bad percent escape", enc("de%zz:s"), "", "", true, true},
		{"bad percent escape in the secret", enc("demo:%zz"), "", "", true, true},
		{"not base64", "Basic ***", "", "", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, secret, ok, err := basicCredentials([]string{tc.header})
			if id != tc.id || secret != tc.secret || ok != tc.ok || (err != nil) != tc.err {
				t.Errorf("got %q, %q, %v, %v; want %q, %q, %v, error %v", id, secret, ok, err, tc.id, tc.secret, tc.ok, tc.err)
			}
		})
	}
}
