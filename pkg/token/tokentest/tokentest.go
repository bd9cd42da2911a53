// Package tokentest sets up, for a test, the credentials the token issuer reads: a keys
// directory with a fresh signing key, a clients file, and a token minted for one of its clients.
// It is for tests only: no production package imports it (pkg/serve's TestImportGraph holds the
// frame to that). It lives beside pkg/token so that every module of the workspace (the frame,
// its internal packages, the services) can use the one copy.
package tokentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Client is one entry of a clients file.
type Client struct {
	ID     string
	Secret string
	// Hash is Secret's PHC hash; "" hashes Secret with argon2id at its default cost
	// (token.HashSecret), as an operator's secret is: each check then takes 0.1 s or more and
	// holds a hashing slot.
	Hash        string
	Services    []string
	Permissions []string
}

// Generated is a client with a fresh generated secret and its fast hash (token.GenerateSecret):
// checking it takes microseconds, so a test of answers never queues for an argon2 slot.
func Generated(t testing.TB, id string, services []string, permissions ...string) Client {
	t.Helper()
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	return Client{ID: id, Secret: secret, Hash: hash, Services: services, Permissions: permissions}
}

// WriteClients writes clients as dir/clients.yaml, replacing the file if there is one, and
// returns its path. Clients sharing a secret without a Hash share one argon2id hash.
func WriteClients(t testing.TB, dir string, clients ...Client) string {
	t.Helper()
	hashes := map[string]string{}
	var b strings.Builder
	b.WriteString("clients:\n")
	for _, c := range clients {
		hash := c.Hash
		if hash == "" {
			if hash = hashes[c.Secret]; hash == "" {
				var err error
				if hash, err = token.HashSecret(c.Secret); err != nil {
					t.Fatal(err)
				}
				hashes[c.Secret] = hash
			}
		}
		entry, err := token.ClientEntry(c.ID, hash, c.Services, c.Permissions, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(entry)
	}
	path := filepath.Join(dir, "clients.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// KeysDir is a new directory holding one fresh Ed25519 signing key, <kid>.pem.
func KeysDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	kid, pem, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Mint is a token for c on service from issuer, issued as a login from 10.1.2.3 would be.
func Mint(t testing.TB, issuer *token.Issuer, c Client, service string) string {
	t.Helper()
	tok, err := issuer.Authenticate(c.ID, c.Secret, service, "10.1.2.3")
	if err != nil {
		t.Fatalf("authenticate %s: %v", c.ID, err)
	}
	return tok.AccessToken
}
