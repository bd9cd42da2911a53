package tokentest

import (
	"os"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestSetup: an issuer loads the keys dir and the clients file written here, and a token minted
// for each client verifies on its service with the client's permissions, not on the other.
func TestSetup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fast := Generated(t, "fast", []string{token.ServiceForecast}, "forecast:reading")
	slow := Client{ID: "slow", Secret: "a-shared-secret", Services: []string{token.ServiceScoring}, Permissions: []string{"*"}}
	twin := Client{ID: "twin", Secret: "a-shared-secret", Services: []string{token.ServiceScoring}, Permissions: []string{"score:standard"}}
	clients := WriteClients(t, dir, fast, slow, twin)
	issuer, err := token.New(token.Options{ClientsFile: clients, KeysDir: KeysDir(t)})
	if err != nil {
		t.Fatalf("New over the files written: %v", err)
	}
	for _, tc := range []struct {
		c                  Client
		service, other, do string
	}{
		{fast, token.ServiceForecast, token.ServiceScoring, "forecast:reading"},
		{slow, token.ServiceScoring, token.ServiceForecast, "score:bayes"},
		{twin, token.ServiceScoring, token.ServiceForecast, "score:standard"},
	} {
		t.Run(tc.c.ID, func(t *testing.T) { // one at a time: argon2 checks in parallel queue and, under -race, time out as busy
			claims, err := issuer.Verify(Mint(t, issuer, tc.c, tc.service), tc.service)
			if err != nil || claims.Require(tc.do) != nil {
				t.Fatalf("got %v; want a token for %s allowed %s", err, tc.service, tc.do)
			}
			if _, err := issuer.Authenticate(tc.c.ID, tc.c.Secret, tc.other, "10.1.2.3"); err == nil {
				t.Errorf("a login on %s: got a token; want none (the client is not registered there)", tc.other)
			}
		})
	}
	t.Run("a shared secret is hashed once", func(t *testing.T) {
		t.Parallel()
		b, err := os.ReadFile(clients)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "$argon2id$"); n != 2 {
			t.Fatalf("got %d argon2id hashes; want 2 (one hash, written for slow and twin):\n%s", n, b)
		}
		if lines := strings.Split(string(b), "\n"); hashOf(lines, "slow") != hashOf(lines, "twin") {
			t.Errorf("slow and twin: got different hashes; want the one hash of their secret:\n%s", b)
		}
	})
}

// hashOf is the secretHash line that follows client id's entry.
func hashOf(lines []string, id string) string {
	for i, l := range lines {
		if strings.HasSuffix(l, "clientId: "+id) && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

// TestWriteClientsReplaces: writing again replaces the file, as a test that rewrites a client's
// entry needs.
func TestWriteClientsReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := Generated(t, "streamer", []string{token.ServiceScoring}, "score:batch")
	WriteClients(t, dir, c)
	c.ID = "someone-else"
	b, err := os.ReadFile(WriteClients(t, dir, c))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); strings.Contains(got, "streamer") || !strings.Contains(got, "someone-else") {
		t.Errorf("got:\n%s\nwant only someone-else", got)
	}
}
