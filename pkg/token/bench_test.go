package token

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
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

// BenchmarkReload is one reload of a clients file near its 4 MiB limit: "unchanged" reads and
// fingerprints it (what every interval costs while nothing changes), "changed" parses it too
// (what every interval cost before unchanged files were skipped).
func BenchmarkReload(b *testing.B) {
	_, hash, err := GenerateSecret()
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("clients:\n")
	for n := 0; sb.Len() < maxClientsFileBytes-1024; n++ {
		fmt.Fprintf(&sb, "  - clientId: client-%06d\n    secretHash: %s\n    services: [scoring, forecast]\n    permissions: [\"*\"]\n", n, hash)
	}
	for _, changed := range []bool{false, true} {
		name := "unchanged"
		if changed {
			name = "changed"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			if err := os.WriteFile(f.clients, []byte(sb.String()), 0o600); err != nil {
				b.Fatal(err)
			}
			if _, err := f.Reload(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if changed {
					f.loaded.clients = [32]byte{} // as if the file had changed
				}
				if got, err := f.Reload(); got != changed || err != nil {
					b.Fatalf("got changed=%v, %v; want %v", got, err, changed)
				}
			}
		})
	}
}
