package token

import (
	"errors"
	"fmt"
	"testing"
)

func TestVerifiedCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil || again.ID != first.ID || again.ClientID != "acme-reader" {
		t.Fatalf("second verify: got %+v, %v; want the same claims", again, err)
	}
	// A cached token is still not good at the other service.
	if _, err := f.Verify(tok.AccessToken, ServiceForecast); !errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("cached scoring token at forecast: got %v; want ErrNotAuthenticated", err)
	}

	c := newVerifiedCache()
	for i := 0; i <= maxVerified; i++ {
		c.put(verifiedKey{"yardstick", ServiceScoring, fmt.Sprint(i)}, Claims{})
	}
	if n := len(c.entries); n != 1 {
		t.Errorf("after %d puts: %d entries; want the cache to start over at its bound", maxVerified+1, n)
	}
}

func BenchmarkVerifyCached(b *testing.B) {
	f := newFixture(b)
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
			b.Fatal(err)
		}
	}
}
