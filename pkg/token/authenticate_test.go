package token

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAuthenticateIssuesScopedTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		client, secret, service string
		scope                   []string
	}{
		{"acme-reader", "acme-secret", ServiceScoring, []string{"score:standard", "score:bayes"}},
		{"acme-reader", "acme-secret", ServiceForecast, []string{"forecast:reading"}},
		{"north", "north-secret", ServiceScoring, []string{"score:scale"}},
	}
	for _, tc := range cases {
		t.Run(tc.client+"@"+tc.service, func(t *testing.T) {
			t.Parallel()
			tok, err := f.Authenticate(tc.client, tc.secret, tc.service, "10.0.0.1:4000")
			if err != nil {
				t.Fatalf("got %v; want a token", err)
			}
			c, err := f.Verify(tok.AccessToken, tc.service)
			if err != nil {
				t.Fatalf("verify: got %v; want nil", err)
			}
			if c.ClientID != tc.client || c.Service != tc.service || !slices.Equal(c.Scope, tc.scope) {
				t.Errorf("got %s at %s with %q; want %s at %s with %q", c.ClientID, c.Service, c.Scope, tc.client, tc.service, tc.scope)
			}
			if len(c.ID) != 22 {
				t.Errorf("got jti %q; want 128 random bits in base64url (22 characters)", c.ID)
			}
		})
	}
	a, _ := f.Authenticate("north", "north-secret", ServiceScoring, "10.0.0.1")
	b, _ := f.Authenticate("north", "north-secret", ServiceScoring, "10.0.0.1")
	ca, _ := f.Verify(a.AccessToken, ServiceScoring)
	cb, _ := f.Verify(b.AccessToken, ServiceScoring)
	if ca.ID == cb.ID {
		t.Errorf("two tokens share jti %q; want distinct", ca.ID)
	}
}

// TestAuthenticateRefuses: an unknown client and a wrong secret give the very same error value,
// and a client without the service gets permission denied only after its secret checked out.
func TestAuthenticateRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name, client, secret, service string
		want                          error
	}{
		{"unknown client", "nobody", "acme-secret", ServiceScoring, ErrNotAuthenticated},
		{"wrong secret", "acme-reader", "north-secret", ServiceScoring, ErrNotAuthenticated},
		{"empty secret", "acme-reader", "", ServiceScoring, ErrNotAuthenticated},
		{"empty client id", "", "", ServiceScoring, ErrNotAuthenticated},
		{"client id of another case", "ACME-READER", "acme-secret", ServiceScoring, ErrNotAuthenticated},
		{"service not granted", "north", "north-secret", ServiceForecast, ErrPermissionDenied},
		{"service not granted, wrong secret", "north", "wrong", ServiceForecast, ErrNotAuthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok, err := f.Authenticate(tc.client, tc.secret, tc.service, "10.0.0.2")
			if !errors.Is(err, tc.want) || tok.AccessToken != "" {
				t.Fatalf("got %q, %v; want no token and %v", tok.AccessToken, err, tc.want)
			}
			if tc.want == ErrNotAuthenticated && err != ErrNotAuthenticated {
				t.Errorf("got %#v; want ErrNotAuthenticated itself, the same for every credential failure", err)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("the error %q quotes the secret", err)
			}
		})
	}
	_, err := f.Authenticate("north", "north-secret", ServiceForecast, "10.0.0.2")
	if want := `permission denied: client "north" has no right on the forecast service`; err == nil || err.Error() != want {
		t.Errorf("got %v; want %q", err, want)
	}
	if _, err := f.Authenticate("north", "north-secret", "billing", "10.0.0.2"); err == nil ||
		errors.Is(err, ErrNotAuthenticated) || errors.Is(err, ErrPermissionDenied) {
		t.Errorf("unknown service: got %v; want a programming error, neither 401 nor 403", err)
	}
}

// TestUnknownClientCostsNoArgon2: an unknown id is checked against a fast dummy hash that matches
// nothing, and takes no hashing slot, so a flood of made-up ids cannot keep argon2 busy.
func TestUnknownClientCostsNoArgon2(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.HashConcurrency, o.HashQueueWait = 1, time.Millisecond })
	reg := f.state.Load().clients
	if reg.dummy.slow() || reg.dummy.matches("") || reg.dummy.matches("unknown client") || reg.dummy.matches("acme-secret") {
		t.Errorf("got dummy %v; want a fast hash that matches no secret", reg.dummy)
	}
	if !f.hashing.enter() {
		t.Fatal("could not take the only hashing slot")
	}
	defer f.hashing.leave()
	if _, err := f.Authenticate("nobody", "x", ServiceScoring, "10.0.0.9"); err != ErrNotAuthenticated {
		t.Errorf("unknown id while every slot is taken: got %v; want ErrNotAuthenticated", err)
	}
}

// TestConcurrentAuthenticateVerifyReload runs the three together under -race.
func TestConcurrentAuthenticateVerifyReload(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.0.0.3")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if w == 0 {
					if _, err := f.Reload(); err != nil {
						errs <- err
					}
					continue
				}
				if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
					errs <- err
				}
				if _, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.0.0.3"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("got %v; want no error", err)
	}
}
