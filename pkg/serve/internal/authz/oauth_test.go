package authz

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TestOAuth2ClientCredentials: golang.org/x/oauth2's client-credentials flow, unchanged, gets a
// token and calls a protected endpoint with it, whichever way it sends its credentials.
func TestOAuth2ClientCredentials(t *testing.T) {
	t.Parallel()
	clients, _ := writeFastClients(t)
	h := newLoginServer(t, clients)
	for _, tc := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"auto-detect", oauth2.AuthStyleAutoDetect}, {"Basic header", oauth2.AuthStyleInHeader}, {"form parameters", oauth2.AuthStyleInParams}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cc := clientcredentials.Config{ClientID: "demo", ClientSecret: "demo-secret", TokenURL: h.base + "/authToken", AuthStyle: tc.style}
			ctx := context.Background()
			tok, err := cc.Token(ctx)
			if err != nil {
				t.Fatalf("Token: %v", err)
			}
			if left := time.Until(tok.Expiry); tok.TokenType != "Bearer" || left < 86390*time.Second || left > 86400*time.Second {
				t.Errorf("got token type %q, expiring in %v; want Bearer, in 24h", tok.TokenType, left)
			}
			resp, err := cc.Client(ctx).Get(h.base + "/whoami")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || resp.StatusCode != 200 || m["client"] != "demo" {
				t.Errorf("protected call: got %d %s; want 200 from the handler, which saw client demo", resp.StatusCode, body)
			}
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		t.Parallel()
		cc := clientcredentials.Config{ClientID: "demo", ClientSecret: "nope", TokenURL: h.base + "/authToken", AuthStyle: oauth2.AuthStyleInHeader}
		_, err := cc.Token(context.Background())
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != "invalid_client" || re.Response.StatusCode != 401 {
			t.Errorf("got %v; want a RetrieveError invalid_client with status 401", err)
		}
	})
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		if r := h.do("GET", "/whoami", "", ""); r.status != 401 {
			t.Errorf("the protected endpoint without a token: got %d %s; want 401 (the check above is not vacuous)", r.status, r.body)
		}
	})
}
