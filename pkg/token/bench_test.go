package token

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
)

// BenchmarkIssue signs a token (the part of Authenticate after the argon2 check).
func BenchmarkIssue(b *testing.B) {
	f := newFixture(b)
	st := f.state.Load()
	c := st.clients.byID["acme-reader"]
	for b.Loop() {
		if _, err := f.issue(st.keys, c, ServiceScoring); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is the per-request cost on every protected call (target: <= 100 µs).
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.10.0.1")
	if err != nil {
		b.Fatal(err)
	}
	cache := f.state.Load().keys.verified
	for b.Loop() {
		clear(cache.entries) // the full check every time: signature and claims (see BenchmarkVerifyCached)
		if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySecret is one argon2id check at the default parameters, the cost of a call
// to /authToken.
func BenchmarkVerifySecret(b *testing.B) {
	h, err := HashSecret("benchmark-secret")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := VerifySecret(h, "benchmark-secret"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkEd25519Verify is the bare signature check, the floor under BenchmarkVerify.
func BenchmarkEd25519Verify(b *testing.B) {
	f := newFixture(b)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.10.0.1")
	if err != nil {
		b.Fatal(err)
	}
	i := strings.LastIndexByte(tok.AccessToken, '.')
	sig, err := base64.RawURLEncoding.DecodeString(tok.AccessToken[i+1:])
	if err != nil {
		b.Fatal(err)
	}
	ks := f.state.Load().keys
	pub := ks.public[ks.signer.kid]
	msg := []byte(tok.AccessToken[:i])
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("signature does not verify")
		}
	}
}
