package token

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestGenerateKey(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC().Add(-time.Second).Format("20060102T150405Z")
	kid, pemBytes, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]{8}$`).MatchString(kid) || kid < before {
		t.Errorf("got kid %q; want <UTC timestamp not before %s>-<8 hex>", kid, before)
	}
	if !kidPattern.MatchString(kid) {
		t.Errorf("got kid %q; want it to be a valid key file name", kid)
	}
	priv, err := parseKeyPEM(pemBytes)
	if err != nil {
		t.Fatalf("parse the generated PEM: %v", err)
	}
	msg := []byte("m")
	if !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, ed25519.Sign(priv, msg)) {
		t.Errorf("the generated key does not sign and verify")
	}
	kid2, _, _ := GenerateKey()
	if kid2 == kid {
		t.Errorf("two kids are both %q; want distinct", kid)
	}
}

// TestLoadKeysOpenSSL loads a key made by `openssl genpkey -algorithm ed25519`, as the
// Kubernetes dev overlay commits one.
func TestLoadKeysOpenSSL(t *testing.T) {
	t.Parallel()
	ks, err := loadKeys(filepath.Join("testdata", "keys-openssl"))
	if err != nil {
		t.Fatal(err)
	}
	if ks.signer.kid != "20260101T000000Z-dev" || len(ks.public) != 1 {
		t.Errorf("got signer %q of %d keys; want 20260101T000000Z-dev of 1", ks.signer.kid, len(ks.public))
	}
}

func TestLoadKeys(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, goodPEM, _ := GenerateKey()
	good := string(goodPEM)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER}))
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		signer string
		keys   int
		err    string
	}{
		{"greatest kid signs", func(t *testing.T, dir string) {
			writeKey(t, dir, "20260101T000000Z-aaaa")
			writeKey(t, dir, "20261122T101500Z-3f9a")
			writeKey(t, dir, "20250101T000000Z-zzzz")
		}, "20261122T101500Z-3f9a", 3, ""},
		{"kubernetes secret mount: hidden entries and symlinks", func(t *testing.T, dir string) {
			data := filepath.Join(dir, "..2026_11_22_10_15_00.1")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			writeKey(t, data, "k1")
			if err := os.Symlink("..2026_11_22_10_15_00.1", filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..data", "k1.pem"), filepath.Join(dir, "k1.pem")); err != nil {
				t.Fatal(err)
			}
			write(t, dir, ".hidden.pem", "junk")
		}, "k1", 1, ""},
		{"other files are ignored", func(t *testing.T, dir string) {
			writeKey(t, dir, "k1")
			write(t, dir, "README", "not a key")
			write(t, dir, "k2.pem.bak", "junk")
		}, "k1", 1, ""},
		{"empty dir", func(t *testing.T, dir string) {}, "", 0, "no <kid>.pem key files"},
		{"only hidden files", func(t *testing.T, dir string) { write(t, dir, ".k1.pem", good) }, "", 0, "no <kid>.pem key files"},
		{"bad kid", func(t *testing.T, dir string) { write(t, dir, "my key.pem", good) }, "", 0, "the key id (file name without .pem) must be"},
		{"not PEM", func(t *testing.T, dir string) { write(t, dir, "k1.pem", "hello") }, "", 0, "k1.pem: no PEM block"},
		{"public key", func(t *testing.T, dir string) {
			write(t, dir, "k1.pem", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n")
		}, "", 0, `PEM block is "PUBLIC KEY"`},
		{"encrypted key", func(t *testing.T, dir string) {
			write(t, dir, "k1.pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
		}, "", 0, "encrypted keys are not supported"},
		{"PKCS#8 garbage", func(t *testing.T, dir string) {
			write(t, dir, "k1.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
		}, "", 0, "not a PKCS#8 private key"},
		{"one bad key fails the set", func(t *testing.T, dir string) {
			writeKey(t, dir, "k1")
			write(t, dir, "k2.pem", "hello")
		}, "", 0, "k2.pem: no PEM block"},
		{"RSA key", func(t *testing.T, dir string) { write(t, dir, "k1.pem", rsaPEM) }, "", 0, "is not an Ed25519 key"},
		{"key file too large", func(t *testing.T, dir string) {
			write(t, dir, "k1.pem", strings.Repeat("x", maxKeyFileBytes+1))
		}, "", 0, "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.setup(t, dir)
			ks, err := loadKeys(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v; want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v; want nil", err)
			}
			if ks.signer.kid != tc.signer || len(ks.public) != tc.keys {
				t.Errorf("got signer %q of %d keys; want %q of %d", ks.signer.kid, len(ks.public), tc.signer, tc.keys)
			}
		})
	}
	if _, err := loadKeys(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Errorf("missing dir: got nil error; want one")
	}
}

func TestJWKS(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeKey(t, f.keysDir, "k2")
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(f.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("got %d keys; want 2", len(set.Keys))
	}
	ks := f.state.Load().keys
	for i, kid := range []string{"k2", "k1"} {
		k := set.Keys[i]
		want := map[string]string{"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
			"x": base64.RawURLEncoding.EncodeToString(ks.public[kid])}
		for field, v := range want {
			if k[field] != v {
				t.Errorf("key %d: got %s %q; want %q", i, field, k[field], v)
			}
		}
		if _, private := k["d"]; private || len(k) != len(want) {
			t.Errorf("key %d: got fields %v; want exactly %v", i, k, want)
		}
	}
	f.JWKS()[0] = 'x'
	if f.JWKS()[0] != '{' {
		t.Errorf("JWKS returned its internal buffer; want a copy")
	}
}
