package token

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// cheapParams make test hashes take microseconds; verification reads the parameters from the
// PHC string, so the code under test is the same as with the defaults.
var cheapParams = argonParams{memory: 64, time: 1, threads: 1, saltLen: 16, keyLen: 32}

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func cheapHash(t testing.TB, secret string) string {
	t.Helper()
	h, err := hashWithParams(secret, cheapParams)
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// testClient is one entry of a generated clients file.
type testClient struct {
	id, secret  string
	services    []string
	permissions []string
}

// writeClients writes a clients file of cheap hashes and returns its path.
func writeClients(t testing.TB, dir string, clients ...testClient) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("clients:\n")
	for _, c := range clients {
		b.WriteString("  - clientId: " + c.id + "\n")
		b.WriteString("    secretHash: " + cheapHash(t, c.secret) + "\n")
		b.WriteString("    services: [" + strings.Join(c.services, ", ") + "]\n")
		b.WriteString("    permissions: [\"" + strings.Join(c.permissions, "\", \"") + "\"]\n")
	}
	path := filepath.Join(dir, "clients.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeKey writes a fresh key as dir/<kid>.pem.
func writeKey(t testing.TB, dir, kid string) {
	t.Helper()
	_, pemBytes, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
}

var (
	acme = testClient{id: "acme-reader", secret: "acme-secret", services: []string{ServiceScoring, ServiceForecast},
		permissions: []string{"score:standard", "score:bayes", "forecast:reading"}}
	north = testClient{id: "north", secret: "north-secret", services: []string{ServiceScoring},
		permissions: []string{"score:scale"}}
)

// fixture is an Issuer over a temp dir with clients acme and north and one key "k1".
type fixture struct {
	*Issuer
	clock   *clock
	dir     string
	keysDir string
	clients string
}

func newFixture(t testing.TB, mutate ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{clock: newClock(), dir: t.TempDir()}
	f.keysDir = filepath.Join(f.dir, "keys")
	if err := os.Mkdir(f.keysDir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeKey(t, f.keysDir, "k1")
	f.clients = writeClients(t, f.dir, acme, north)
	opts := Options{ClientsFile: f.clients, KeysDir: f.keysDir, Now: f.clock.Now}
	for _, m := range mutate {
		m(&opts)
	}
	var err error
	if f.Issuer, err = New(opts); err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		t.Errorf("got:\n%s\nwant (%s):\n%s", got, path, want)
	}
}
