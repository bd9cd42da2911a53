package token

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := parsed.Header["kid"].(string)
	return kid
}

// TestKeyRotation follows the documented procedure: add a newer key, reload, and the new key
// signs while the old one still verifies; remove the old file, reload, and its tokens fail.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	auth := func() string {
		t.Helper()
		tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.5.0.1")
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	old := auth()
	if kid := kidOf(t, old); kid != "k1" {
		t.Fatalf("got kid %q; want k1", kid)
	}
	writeKey(t, f.keysDir, "k2")
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	fresh := auth()
	if kid := kidOf(t, fresh); kid != "k2" {
		t.Errorf("after adding k2: got kid %q; want k2 to sign", kid)
	}
	for name, tok := range map[string]string{"old": old, "new": fresh} {
		if _, err := f.Verify(tok, ServiceScoring); err != nil {
			t.Errorf("%s token while both keys are listed: got %v; want accepted", name, err)
		}
	}
	if err := os.Remove(filepath.Join(f.keysDir, "k1.pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Verify(old, ServiceScoring); err != nil {
		t.Errorf("old token before the reload: got %v; want accepted still", err)
	}
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Verify(old, ServiceScoring); err == nil || err.Error() != "not authenticated: unknown key id" {
		t.Errorf("old token after removing k1: got %v; want unknown key id", err)
	}
	if _, err := f.Verify(fresh, ServiceScoring); err != nil {
		t.Errorf("new token: got %v; want accepted", err)
	}
	if got := f.Summary(); got != "2 clients, 1 key (signing kid=k2)" {
		t.Errorf("got summary %q; want 2 clients, 1 key (signing kid=k2)", got)
	}
}

// TestReloadKeepsLastGood: a broken clients file or keys dir is refused with its reason and the
// last good version keeps serving; a good one is taken; each part is judged on its own.
func TestReloadKeepsLastGood(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	canAuth := func(client, secret string) bool {
		_, err := f.Authenticate(client, secret, ServiceScoring, "10.6.0.1")
		return err == nil
	}
	// A good change: north goes, east comes.
	east := testClient{id: "east", secret: "east-secret", services: []string{ServiceScoring}, permissions: []string{PermAll}}
	writeClients(t, f.dir, acme, east)
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if !canAuth("east", "east-secret") || canAuth("north", "north-secret") {
		t.Fatalf("after a good reload: want east in and north out")
	}
	// A broken clients file and a good keys change together.
	broken := "clients:\n  - clientId: west\n    secretHash: nope\n    services: [scoring]\n    permissions: [\"*\"]\n"
	if err := os.WriteFile(f.clients, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	writeKey(t, f.keysDir, "k2")
	changed, err := f.Reload()
	if !changed || err == nil || !strings.Contains(err.Error(), f.clients+":3: client \"west\": secretHash: not a PHC string") {
		t.Fatalf("got changed=%v, %v; want changed (the keys) and the clients file problem at line 3", changed, err)
	}
	if !canAuth("east", "east-secret") || !canAuth("acme-reader", "acme-secret") {
		t.Errorf("after a broken clients file: want the last good clients kept")
	}
	if got := f.state.Load().keys.signer.kid; got != "k2" {
		t.Errorf("got signer %q; want k2: the good keys change is taken despite the broken clients file", got)
	}
	// A broken keys dir: the last good keys stay.
	tok, _ := f.Authenticate("east", "east-secret", ServiceScoring, "10.6.0.1")
	if err := os.WriteFile(filepath.Join(f.keysDir, "k3.pem"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err = f.Reload()
	if changed || err == nil || !strings.Contains(err.Error(), "k3.pem: no PEM block") {
		t.Fatalf("got changed=%v, %v; want unchanged and the k3.pem problem", changed, err)
	}
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("after a broken keys dir: got %v; want tokens of the last good keys accepted", err)
	}
	// The clients file removed entirely: still the last good clients.
	if err := os.Remove(f.clients); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Reload(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v; want a not-exist error", err)
	}
	if !canAuth("east", "east-secret") {
		t.Errorf("after removing the clients file: want the last good clients kept")
	}
}
