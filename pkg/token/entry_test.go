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
	got, err := ClientEntry("acme-reader", hash, []string{"scoring", "forecast"}, []string{"score:standard", "*"}, nil)
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
	withPrograms, err := ClientEntry("district-reader", hash, []string{"scoring"}, []string{"*"}, []string{"district-7", "district-9"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "    programs: [district-7, district-9]\n"; !strings.HasSuffix(string(withPrograms), want) {
		t.Errorf("got:\n%s\nwant it to end with:\n%s", withPrograms, want)
	}
	clients, err = parseClients("c.yaml", append([]byte("clients:\n"), withPrograms...))
	if err != nil || len(clients) != 1 || strings.Join(clients[0].programs, ",") != "district-7,district-9" {
		t.Errorf("the entry with programs does not load back: %v", err)
	}
	cases := []struct {
		name, id, hash            string
		services, perms, programs []string
		want                      string
	}{
		{"bad id", "a b", hash, []string{"scoring"}, []string{"*"}, nil, `clientId "a b" must be`},
		{"unknown service", "x", hash, []string{"billing"}, []string{"*"}, nil, `unknown service "billing"`},
		{"no services", "x", hash, nil, []string{"*"}, nil, "services must be a non-empty list"},
		{"unknown permission", "x", hash, []string{"scoring"}, []string{"score:all"}, nil, `unknown permission "score:all"`},
		{"permission of an unlisted service", "x", hash, []string{"scoring"}, []string{"forecast:group"}, nil, `needs service "forecast"`},
		{"adaptive needs scoring", "x", hash, []string{"forecast"}, []string{"score:adaptive"}, nil, `needs service "scoring"`},
		{"bad hash", "x", "plain", []string{"scoring"}, []string{"*"}, nil, "not a PHC string"},
		{"bad program", "x", hash, []string{"scoring"}, []string{"*"}, []string{"District 7"}, `program "District 7" must be 1 to 64 of a-z 0-9`},
		{"every program and one", "x", hash, []string{"scoring"}, []string{"*"}, []string{"*", "district-7"}, `"*" (every program) stands alone`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ClientEntry(tc.id, tc.hash, tc.services, tc.perms, tc.programs)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ":2:") {
				t.Errorf("got %v; want an error containing %q, without a line number", err, tc.want)
			}
		})
	}
}
