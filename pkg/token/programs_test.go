package token

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParsePrograms: programs is optional (absent or empty: shared content only), a list of
// distinct program names or "*" alone; names follow the bundles' rule (1 to 64 of a-z 0-9 . _ -
// starting with a letter or digit). A bad entry is reported at its line.
func TestParsePrograms(t *testing.T) {
	t.Parallel()
	head := "clients:\n  - clientId: c\n    secretHash: $sha256$ByZ5KQX0EHjmHy6Sx01Nsw$cPKeyA0IVGfwyj7AUkzGnSONR45LMX8/6TbIk/ay43M\n" +
		"    services: [scoring]\n    permissions: [\"*\"]\n"
	longest := "a0._-" + strings.Repeat("z", 59)
	for _, tc := range []struct {
		name, programs string
		want           []string
		err            string
	}{
		{"absent", "", nil, ""},
		{"empty list", "    programs: []\n", []string{}, ""},
		{"two", "    programs: [acme, beta]\n", []string{"acme", "beta"}, ""},
		{"every program", "    programs: [\"*\"]\n", []string{"*"}, ""},
		{"the longest name", "    programs: [" + longest + "]\n", []string{longest}, ""},
		{"a name too long", "    programs: [" + longest + "z]\n", nil,
			`c.yaml:6: client "c": program "` + longest + `z" must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit`},
		{"upper case", "    programs: [Acme]\n", nil,
			`c.yaml:6: client "c": program "Acme" must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit`},
		{"star with others", "    programs:\n      - acme\n      - \"*\"\n", nil, `c.yaml:8: client "c": "*" (every program) stands alone in programs`},
		{"repeated", "    programs:\n      - acme\n      - acme\n", nil, `c.yaml:8: client "c": program "acme" is repeated`},
		{"a scalar", "    programs: acme\n", nil, `c.yaml:6: client "c": programs must be a list of program names, or ["*"] for every program`},
		{"a number", "    programs: [7]\n", nil, `c.yaml:6: client "c": each program must be a string (quote it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clients, err := parseClients("c.yaml", []byte(head+tc.programs))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("got %v; want %s", err, tc.err)
				}
				return
			}
			if err != nil || len(clients) != 1 {
				t.Fatalf("got %d clients, %v; want 1 and no error", len(clients), err)
			}
			if got := clients[0].programs; !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

// TestProgramsFollowTheFile: a verified token's claims carry the client's programs as the
// clients file in force says, a cached token's too; a reload with a bad entry is refused at its
// file:line and the last good programs stay.
func TestProgramsFollowTheFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.6.0.1")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil || claims.Programs != nil {
		t.Fatalf("before any programs: got %q, %v; want none (shared content only)", claims.Programs, err)
	}
	data, err := os.ReadFile(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	set := func(programs string) error {
		t.Helper()
		text := strings.Replace(string(data), "  - clientId: north\n", "  - clientId: north\n"+programs, 1)
		if programs != "" && text == string(data) {
			t.Fatalf("the fixture's clients file has no north entry:\n%s", data)
		}
		if err := os.WriteFile(f.clients, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Second)
		_, err := f.Reload()
		return err
	}
	for _, step := range []struct {
		programs string
		want     []string
	}{
		{"    programs: [acme]\n", []string{"acme"}},
		{"    programs: [beta, acme]\n", []string{"beta", "acme"}},
		{"    programs: [\"*\"]\n", []string{"*"}},
		{"", nil},
	} {
		if err := set(step.programs); err != nil {
			t.Fatal(err)
		}
		claims, err := f.Verify(tok.AccessToken, ServiceScoring)
		if err != nil || !slices.Equal(claims.Programs, step.want) {
			t.Errorf("programs %q: got %q, %v; want %q", step.programs, claims.Programs, err, step.want)
		}
	}
	if err := set("    programs: [acme]\n"); err != nil {
		t.Fatal(err)
	}
	err = set("    programs: [ACME]\n")
	line := 2 + slices.Index(strings.Split(string(data), "\n"), "  - clientId: north")
	want := f.clients + ":" + strconv.Itoa(line) + `: client "north": program "ACME" must be`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v; want an error containing %s", err, want)
	}
	if claims, _ := f.Verify(tok.AccessToken, ServiceScoring); !slices.Equal(claims.Programs, []string{"acme"}) {
		t.Errorf("after a refused reload: got %q; want the last good [acme]", claims.Programs)
	}
}
