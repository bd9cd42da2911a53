package token

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// entry is one clients-file entry with its hash given, so a test can keep or change it.
type entry struct {
	id, hash    string
	services    []string
	permissions []string
}

// writeEntries replaces the clients file with entries.
func writeEntries(t *testing.T, path string, entries ...entry) {
	t.Helper()
	var b strings.Builder
	b.WriteString("clients:\n")
	for _, e := range entries {
		b.WriteString("  - clientId: " + e.id + "\n    secretHash: " + e.hash + "\n")
		b.WriteString("    services: [" + strings.Join(e.services, ", ") + "]\n")
		b.WriteString("    permissions: [\"" + strings.Join(e.permissions, "\", \"") + "\"]\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// addClient appends a client with every permission on scoring to the fixture's clients file
// and reloads.
func addClient(t *testing.T, f *fixture, id, hash string) {
	t.Helper()
	data, err := os.ReadFile(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	more := "  - clientId: " + id + "\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"*\"]\n"
	if err := os.WriteFile(f.clients, append(data, more...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
}

// TestRevocation: every verification checks the token's client against the clients as last
// loaded, whether or not the token's signature check was cached.
func TestRevocation(t *testing.T) {
	t.Parallel()
	hash := cheapHash(t, "acme-secret")
	other := cheapHash(t, "new-secret")
	full := entry{"acme-reader", hash, []string{ServiceScoring, ServiceForecast}, []string{"score:standard", "score:bayes", "forecast:reading"}}
	northE := entry{"north", cheapHash(t, "north-secret"), []string{ServiceScoring}, []string{"score:scale"}}
	type check struct {
		err   string   // "" = accepted
		scope []string // when accepted
	}
	cases := []struct {
		name  string
		steps [][]entry // clients files loaded one after the other, a second apart, after the token
		want  check
	}{
		{"unchanged", [][]entry{{full, northE}}, check{scope: []string{"score:standard", "score:bayes"}}},
		{"removed", [][]entry{{northE}}, check{err: "not authenticated: client no longer registered"}},
		{"re-keyed", [][]entry{{{full.id, other, full.services, full.permissions}, northE}}, check{err: "not authenticated: client secret changed"}},
		{"same secret hashed again (new salt)", [][]entry{{{full.id, cheapHash(t, "acme-secret"), full.services, full.permissions}}},
			check{err: "not authenticated: client secret changed"}},
		{"re-keyed and back", [][]entry{{{full.id, other, full.services, full.permissions}}, {full}},
			check{err: "not authenticated: token predates the client's registration"}},
		{"removed and re-added with the same hash", [][]entry{{northE}, {full, northE}},
			check{err: "not authenticated: token predates the client's registration"}},
		{"a permission removed", [][]entry{{{full.id, hash, full.services, []string{"score:standard", "forecast:reading"}}}},
			check{scope: []string{"score:standard"}}},
		{"the service removed", [][]entry{{{full.id, hash, []string{ServiceForecast}, []string{"forecast:reading"}}}},
			check{scope: []string{}}},
		{"widened to * keeps the token's scope", [][]entry{{{full.id, hash, full.services, []string{PermAll}}}},
			check{scope: []string{"score:standard", "score:bayes"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			writeEntries(t, f.clients, full, northE)
			if _, err := f.Reload(); err != nil {
				t.Fatal(err)
			}
			tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.6.0.1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil { // cached from here on
				t.Fatal(err)
			}
			for _, step := range tc.steps {
				f.clock.Advance(time.Second)
				writeEntries(t, f.clients, step...)
				if _, err := f.Reload(); err != nil {
					t.Fatal(err)
				}
			}
			for _, pass := range []string{"cached", "again"} {
				c, err := f.Verify(tok.AccessToken, ServiceScoring)
				switch {
				case tc.want.err != "":
					if err == nil || err.Error() != tc.want.err || !errors.Is(err, ErrNotAuthenticated) || !errors.Is(err, ErrTokenRevoked) {
						t.Errorf("%s: got %+v, %v; want %q, of kind ErrTokenRevoked", pass, c, err, tc.want.err)
					}
				case err != nil:
					t.Errorf("%s: got %v; want accepted", pass, err)
				case !slices.Equal(c.Scope, tc.want.scope):
					t.Errorf("%s: got scope %q; want %q", pass, c.Scope, tc.want.scope)
				}
			}
			// Whatever happened to the old token, the client as now registered gets working ones.
			secret := "acme-secret"
			if tc.name == "re-keyed" {
				secret = "new-secret"
			}
			fresh, err := f.Authenticate("acme-reader", secret, ServiceForecast, "10.6.0.1")
			if tc.name == "removed" || tc.name == "the service removed" {
				return
			}
			if err != nil {
				t.Fatalf("new login: got %v; want a token", err)
			}
			if _, err := f.Verify(fresh.AccessToken, ServiceForecast); err != nil {
				t.Errorf("new token: got %v; want accepted", err)
			}
		})
	}
}

// TestNarrowedPermissionIsDenied: the narrowed claims fail Require for what was cut.
func TestNarrowedPermissionIsDenied(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.6.0.2")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Verify(tok.AccessToken, ServiceScoring)
	if err := c.Require("score:bayes"); err != nil {
		t.Fatalf("before: got %v; want allowed", err)
	}
	writeEntries(t, f.clients, entry{"acme-reader", f.state.Load().clients.byID["acme-reader"].hash.String(),
		[]string{ServiceScoring}, []string{"score:standard"}})
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	c, err = f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil {
		t.Fatalf("after: got %v; want the token still valid", err)
	}
	if err := c.Require("score:bayes"); !errors.Is(err, ErrPermissionDenied) {
		t.Errorf("after: got %v; want ErrPermissionDenied for the cut permission", err)
	}
	if err := c.Require("score:standard"); err != nil {
		t.Errorf("after: got %v; want the kept permission allowed", err)
	}
}

// TestReaddedTokensOfTheSameSecond: iat has whole seconds, so a token issued in the second of
// the re-registration stands (a token from before the removal cannot be of that second: the
// removal was loaded in between).
func TestReaddedTokensOfTheSameSecond(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg := f.state.Load().clients
	e := entry{"acme-reader", reg.byID["acme-reader"].hash.String(), []string{ServiceScoring}, []string{"score:standard"}}
	n := entry{"north", reg.byID["north"].hash.String(), []string{ServiceScoring}, []string{"score:scale"}}
	old, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.6.0.3")
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(1200 * time.Millisecond)
	writeEntries(t, f.clients, n) // acme-reader removed
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(500 * time.Millisecond) // the removal was loaded at 1.2 s, the re-add at 1.7 s
	writeEntries(t, f.clients, e, n)
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.6.0.3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("token issued after the re-add, iat of the removal's second: got %v; want accepted", err)
	}
	if _, err := f.Verify(old.AccessToken, ServiceScoring); err == nil {
		t.Error("token issued before the removal: got accepted; want refused")
	}
}
