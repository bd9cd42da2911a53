package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

func runTool(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHash(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, stdin string
		args        []string
		secret      string
	}{
		{"stdin with a newline", "s3cret\n", []string{"hash"}, "s3cret"},
		{"stdin without a newline", "s3cret", []string{"hash"}, "s3cret"},
		{"secret file with CRLF", "ignored", []string{"hash", "-secret-file", file}, "from-file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runTool(t, tc.stdin, tc.args...)
			if code != 0 {
				t.Fatalf("got exit %d, stderr %q; want 0", code, errOut)
			}
			phc := strings.TrimSuffix(out, "\n")
			if ok, err := token.VerifySecret(phc, tc.secret); !ok || err != nil {
				t.Errorf("got %q, which does not verify %q (%v)", phc, tc.secret, err)
			}
			if strings.Contains(out+errOut, tc.secret) {
				t.Errorf("the output shows the secret")
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"no command", "", nil, 2, "usage:"},
		{"unknown command", "", []string{"rotate"}, 2, `unknown command "rotate"`},
		{"secret on the command line", "", []string{"hash", "s3cret"}, 2, "never from the command line"},
		{"empty secret", "\n", []string{"hash"}, 1, "the secret is empty"},
		{"two lines", "a\nb\n", []string{"hash"}, 1, "must be one line"},
		{"huge input", strings.Repeat("x", maxSecretInput+1), []string{"hash"}, 1, "longer than"},
		{"missing secret file", "", []string{"hash", "-secret-file", "/nonexistent/secret"}, 1, "no such file"},
		{"unknown flag", "", []string{"hash", "-secret", "x"}, 2, "flag provided but not defined"},
		{"keygen without dir", "", []string{"keygen"}, 2, "-dir is required"},
		{"client with a bad service", "", []string{"client", "-id", "x", "-services", "billing", "-permissions", "*"}, 1, `unknown service "billing"`},
		{"client without permissions", "", []string{"client", "-id", "x", "-services", "scoring"}, 1, "permissions must be a non-empty list"},
		{"client with a bad program", "", []string{"client", "-id", "x", "-services", "scoring", "-permissions", "*", "-programs", "a b"}, 1, `program "a b" must be`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runTool(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("got exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr containing %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
	if code, out, _ := runTool(t, "", "help"); code != 0 || !strings.Contains(out, "yardstick-token keygen") {
		t.Errorf("help: got exit %d, %q; want 0 and the usage", code, out)
	}
	if code, _, errOut := runTool(t, "", "keygen", "-h"); code != 0 || !strings.Contains(errOut, "-dir") {
		t.Errorf("keygen -h: got exit %d, %q; want 0 and the flags", code, errOut)
	}
}

// TestKeygenAndClient goes the operator's way: make a key and a client, start an Issuer on
// them, and get a token with the secret the tool printed.
func TestKeygenAndClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	code, out, errOut := runTool(t, "", "keygen", "-dir", keys)
	if code != 0 {
		t.Fatalf("keygen: got exit %d, %q", code, errOut)
	}
	kid := strings.TrimSuffix(out, "\n")
	info, err := os.Stat(filepath.Join(keys, kid+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("got mode %v; want 0600", info.Mode().Perm())
	}

	code, entry, errOut := runTool(t, "", "client", "-id", "acme-reader", "-services", "scoring, forecast",
		"-permissions", "score:standard,forecast:reading", "-programs", "district-7")
	if code != 0 {
		t.Fatalf("client: got exit %d, %q", code, errOut)
	}
	m := regexp.MustCompile(`(?m)^([A-Za-z0-9_-]{43})$`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("got stderr %q; want the new secret on a line of its own", errOut)
	}
	secret := m[1]
	if strings.Contains(entry, secret) {
		t.Errorf("the clients entry on stdout holds the plain secret")
	}
	if !strings.Contains(entry, "secretHash: $sha256$") {
		t.Errorf("got entry %q; want the fast $sha256$ hash for a secret the tool made", entry)
	}
	clients := filepath.Join(dir, "clients.yaml")
	if err := os.WriteFile(clients, []byte("clients:\n"+entry), 0o600); err != nil {
		t.Fatal(err)
	}
	iss, err := token.New(token.Options{ClientsFile: clients, KeysDir: keys})
	if err != nil {
		t.Fatalf("New on the tool's output: %v", err)
	}
	tok, err := iss.Authenticate("acme-reader", secret, token.ServiceForecast, "127.0.0.1")
	if err != nil {
		t.Fatalf("authenticate with the printed secret: %v", err)
	}
	c, err := iss.Verify(tok.AccessToken, token.ServiceForecast)
	if err != nil || !c.Allows("forecast:reading") || c.Allows("forecast:group") {
		t.Errorf("got %+v, %v; want forecast:reading only", c, err)
	}
	if err == nil && strings.Join(c.Programs, ",") != "district-7" {
		t.Errorf("got programs %v; want [district-7] as -programs said", c.Programs)
	}
	if want := "1 client, 1 key (signing kid=" + kid + ")"; iss.Summary() != want {
		t.Errorf("got summary %q; want %q", iss.Summary(), want)
	}
	// A -dir that is a file is refused.
	if code, _, errOut := runTool(t, "", "keygen", "-dir", filepath.Join(keys, kid+".pem")); code != 1 {
		t.Errorf("keygen into a file path: got exit %d, %q; want 1", code, errOut)
	}
}
