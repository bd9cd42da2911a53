package token

import (
	"strings"
	"testing"
)

// FuzzVerify: Verify never panics and accepts nothing but the exact tokens the issuer made.
// The seeds (run by every plain `go test`) are those tokens, their pieces and near misses.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f)
	issued := map[string]bool{}
	for _, svc := range Services() {
		tok, err := fx.Authenticate("acme-reader", "acme-secret", svc, "10.9.0.1")
		if err != nil {
			f.Fatal(err)
		}
		issued[tok.AccessToken] = true
		parts := strings.Split(tok.AccessToken, ".")
		f.Add(tok.AccessToken)
		f.Add(parts[0] + "." + parts[1] + ".")
		f.Add(parts[0] + ".." + parts[2])
		f.Add(tok.AccessToken + "=")
		f.Add(strings.ToUpper(tok.AccessToken))
		f.Add(tok.AccessToken[:len(tok.AccessToken)-1])
	}
	for _, s := range []string{
		"", ".", "..", "...", "a.b.c", "e30.e30.", "e30.e30.e30",
		"eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhY21lLXJlYWRlciJ9.", // alg none
		"eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.e30.AAAA",                      // HS256, kid k1
		"eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIn0.bnVsbA.AAAA",                   // payload null
		"eyJhbGciOiJFZERTQSIsImtpZCI6WzFdfQ.e30.",                           // kid an array
		strings.Repeat("A", MaxTokenLen+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, svc := range Services() {
			c, err := fx.Verify(s, svc)
			if err == nil && !issued[s] {
				t.Fatalf("accepted a token the issuer never made: %q -> %+v", s, c)
			}
			if err != nil && len(s) > 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error %q quotes the input", err)
			}
		}
	})
}
