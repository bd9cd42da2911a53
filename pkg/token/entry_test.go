package token

import (
	"regexp"
	"strings"
	"testing"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret()
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).MatchString(a) || a == b {
		t.Errorf("got %q and %q; want two distinct 43-character base64url secrets", a, b)
	}
}

func TestClientEntry(t *testing.T) {
	t.Parallel()
	hash := cheapHash(t, "s")
	got, err := ClientEntry("acme-reader", hash, []string{"scoring", "forecast"}, []string{"score:standard", "*"})
	if err != nil {
		t.Fatal(err)
	}
	want := "  - clientId: acme-reader\n    secretHash: " + hash + "\n    services: [scoring, forecast]\n    permissions: ['score:standard', '*']\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	clients, err := parseClients("c.yaml", append([]byte("clients:\n"), got...))
	if err != nil || len(clients) != 1 || !clients[0].hash.matches("s") {
		t.Errorf("the entry does not load back: %v", err)
	}
	cases := []struct {
		name, id, hash  string
		services, perms []string
		want            string
	}{
		{"bad id", "a b", hash, []string{"scoring"}, []string{"*"}, `clientId "a b" must be`},
		{"unknown service", "x", hash, []string{"billing"}, []string{"*"}, `unknown service "billing"`},
		{"no services", "x", hash, nil, []string{"*"}, "services must be a non-empty list"},
		{"unknown permission", "x", hash, []string{"scoring"}, []string{"score:all"}, `unknown permission "score:all"`},
		{"permission of an unlisted service", "x", hash, []string{"scoring"}, []string{"forecast:group"}, `needs service "forecast"`},
		{"adaptive needs scoring", "x", hash, []string{"forecast"}, []string{"score:adaptive"}, `needs service "scoring"`},
		{"bad hash", "x", "plain", []string{"scoring"}, []string{"*"}, "not a PHC string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ClientEntry(tc.id, tc.hash, tc.services, tc.perms)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ":2:") {
				t.Errorf("got %v; want an error containing %q, without a line number", err, tc.want)
			}
		})
	}
}
