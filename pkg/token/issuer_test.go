package token

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	writeKey(t, keys, "k1")
	clients := writeClients(t, dir, acme)
	noClients := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(noClients, []byte("clients: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	demo := filepath.Join(dir, "demo.yaml")
	demoClient := testClient{id: "demo", secret: "x", services: []string{"scoring"}, permissions: []string{"*"}}
	if err := os.Rename(writeClients(t, t.TempDir(), demoClient), demo); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"no clients file outside dev", Options{KeysDir: keys}, "no clients file configured"},
		{"no keys dir outside dev", Options{ClientsFile: clients}, "no keys dir configured"},
		{"missing clients file", Options{ClientsFile: filepath.Join(dir, "absent.yaml"), KeysDir: keys}, "absent.yaml"},
		{"empty keys dir", Options{ClientsFile: clients, KeysDir: t.TempDir()}, "no <kid>.pem key files"},
		{"empty keys dir in dev", Options{Dev: true, KeysDir: t.TempDir()}, "no <kid>.pem key files"},
		{"both broken: both reported", Options{ClientsFile: filepath.Join("testdata", "clients", "entries.yaml"), KeysDir: t.TempDir()},
			"entries.yaml:4: client \"acme-reader\": unknown service \"billing\""},
		{"no clients in the file", Options{ClientsFile: noClients, KeysDir: keys}, "none.yaml: no clients defined"},
		{"demo client in the file in dev", Options{Dev: true, ClientsFile: demo}, `demo.yaml:2: clientId "demo" is reserved`},
		{"TTL below a second", Options{ClientsFile: clients, KeysDir: keys, TTL: time.Millisecond}, "below one second"},
		{"negative leeway", Options{ClientsFile: clients, KeysDir: keys, Leeway: -time.Second}, "negative"},
		{"negative burst", Options{ClientsFile: clients, KeysDir: keys, Throttle: ThrottleConfig{PerClient: Bucket{Burst: -1}}}, "PerClient has a negative field"},
		{"negative refill", Options{ClientsFile: clients, KeysDir: keys, Throttle: ThrottleConfig{PerAddress: Bucket{Refill: -1}}}, "PerAddress has a negative field"},
		{"negative global", Options{ClientsFile: clients, KeysDir: keys, Throttle: ThrottleConfig{PerClientGlobal: Bucket{Burst: -1}}}, "PerClientGlobal has a negative field"},
		{"negative cap", Options{ClientsFile: clients, KeysDir: keys, Throttle: ThrottleConfig{MaxTracked: -1}}, "MaxTracked -1 is negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i, err := New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error containing %q", i, err, tc.want)
			}
		})
	}
	t.Run("both broken: keys reported too", func(t *testing.T) {
		t.Parallel()
		_, err := New(Options{ClientsFile: filepath.Join("testdata", "clients", "entries.yaml"), KeysDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "no <kid>.pem key files") {
			t.Errorf("got %v; want the keys problem reported beside the clients problems", err)
		}
	})
}

func TestDevMode(t *testing.T) {
	t.Parallel()
	clk := newClock()
	t.Run("alone: demo client and an ephemeral key", func(t *testing.T) {
		t.Parallel()
		i, err := New(Options{Dev: true, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		for _, svc := range Services() {
			tok, err := i.Authenticate(DevClientID, DevClientSecret, svc, "127.0.0.1:5000")
			if err != nil {
				t.Fatalf("%s: got %v; want a token", svc, err)
			}
			c, err := i.Verify(tok.AccessToken, svc)
			if err != nil || c.ClientID != DevClientID || !c.Allows("forecast:group") || !c.Allows("score:bayes") {
				t.Errorf("%s: got %+v, %v; want the demo client with every permission", svc, c, err)
			}
		}
		if _, err := i.Authenticate(DevClientID, "wrong", ServiceScoring, "127.0.0.1"); err != ErrNotAuthenticated {
			t.Errorf("wrong demo secret: got %v; want ErrNotAuthenticated", err)
		}
		sum := i.Summary()
		if !strings.HasPrefix(sum, "1 client, 1 key (signing kid=dev-") || !strings.HasSuffix(sum, `dev mode: demo client "demo" with all permissions, ephemeral signing key`) {
			t.Errorf("got summary %q; want 1 client, 1 ephemeral dev key, dev mode announced", sum)
		}
		if strings.Contains(sum, DevClientSecret) {
			t.Errorf("the summary %q holds the demo secret", sum)
		}
		if _, err := i.Reload(); err != nil {
			t.Errorf("Reload in dev with nothing configured: got %v; want nil", err)
		}
	})
	t.Run("with a clients file and a keys dir: shared keys, file clients plus demo", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, func(o *Options) { o.Dev = true })
		if _, err := f.Authenticate(DevClientID, DevClientSecret, ServiceForecast, "10.0.0.1"); err != nil {
			t.Errorf("demo: got %v; want a token", err)
		}
		if _, err := f.Authenticate("acme-reader", "acme-secret", ServiceForecast, "10.0.0.1"); err != nil {
			t.Errorf("acme-reader: got %v; want a token", err)
		}
		if got, want := f.Summary(), `3 clients, 1 key (signing kid=k1); dev mode: demo client "demo" with all permissions`; got != want {
			t.Errorf("got summary %q; want %q", got, want)
		}
		// A second replica over the same keys dir accepts the first one's tokens.
		other, err := New(Options{Dev: true, KeysDir: f.keysDir, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := f.Authenticate(DevClientID, DevClientSecret, ServiceScoring, "10.0.0.1")
		if _, err := other.Verify(tok.AccessToken, ServiceScoring); err != nil {
			t.Errorf("replica: got %v; want the token accepted", err)
		}
	})
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 86400 {
		t.Errorf("got expiresIn %d; want 86400", tok.ExpiresIn)
	}
	c, err := f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IssuedAt.Equal(f.clock.Now()) || !c.ExpiresAt.Equal(f.clock.Now().Add(DefaultTTL)) {
		t.Errorf("got iat %v exp %v; want now and now+24h", c.IssuedAt, c.ExpiresAt)
	}
	f.clock.Advance(DefaultTTL + DefaultLeeway - time.Second)
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("just inside TTL+leeway: got %v; want accepted", err)
	}
	f.clock.Advance(2 * time.Second)
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); !errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("past TTL+leeway: got %v; want ErrNotAuthenticated", err)
	}
}

func TestCustomIssuerAndTTL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.Issuer = "yardstick-staging"; o.TTL = time.Hour; o.Leeway = time.Second })
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 3600 {
		t.Errorf("got expiresIn %d; want 3600", tok.ExpiresIn)
	}
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("got %v; want accepted by its own issuer", err)
	}
	plain := newFixture(t)
	plain.state.Store(f.state.Load()) // same keys, default iss
	if _, err := plain.Verify(tok.AccessToken, ServiceScoring); err == nil || !strings.Contains(err.Error(), "wrong issuer") {
		t.Errorf("got %v; want wrong issuer at an issuer named yardstick", err)
	}
	f.clock.Advance(time.Hour + 2*time.Second)
	// The token was verified (and cached) above: the cache's own expiry check answers.
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err == nil || !strings.Contains(err.Error(), "token expired") || !errors.Is(err, ErrTokenExpired) {
		t.Errorf("got %v; want expired (ErrTokenExpired) after 1h + 1s leeway", err)
	}
}
