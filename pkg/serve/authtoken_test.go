package serve

import (
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// cfpOf is the cfp claim (the client's secret hash fingerprint) of a token we issued, for tests
// that forge tokens of that client with our key.
func cfpOf(t *testing.T, tok string) string {
	t.Helper()
	var claims jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &claims); err != nil {
		t.Fatal(err)
	}
	cfp, _ := claims["cfp"].(string)
	if cfp == "" {
		t.Fatalf("token without cfp: %v", claims)
	}
	return cfp
}

// TestAuthTokenPaths: the front serves POST /authToken (internal/authz, whose tests hold every
// shape of its answers) at its path with or without the trailing slash.
func TestAuthTokenPaths(t *testing.T) {
	t.Parallel()
	h := startTest(t, testConfig(t))
	for _, path := range []string{"/authToken", "/authToken/"} {
		r := h.post(path, `{"clientId":"demo","clientSecret":"demo-secret"}`)
		if r.status != http.StatusOK || !compactToken.Match(r.body) || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: got %d %s; want 200 {\"accessToken\",\"expiresIn\"}, not cached", path, r.status, r.body)
		}
	}
}
