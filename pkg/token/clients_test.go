package token

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestReadClientsFileGood(t *testing.T) {
	t.Parallel()
	clients, err := loadClientsFile(filepath.Join("testdata", "clients", "good.yaml"))
	if err != nil {
		t.Fatalf("got %v; want nil", err)
	}
	want := []struct {
		id, secret  string
		services    []string
		permissions []string
		line        int
	}{
		{"acme-reader", "acme-secret", []string{"scoring", "forecast"}, []string{"score:standard", "score:bayes", "forecast:reading"}, 4},
		{"north", "north-secret", []string{"scoring"}, []string{"*"}, 8},
	}
	if len(clients) != len(want) {
		t.Fatalf("got %d clients; want %d", len(clients), len(want))
	}
	for i, w := range want {
		c := clients[i]
		if c.id != w.id || !slices.Equal(c.services, w.services) || !slices.Equal(c.permissions, w.permissions) || c.line != w.line {
			t.Errorf("client %d: got %s %v %v line %d; want %s %v %v line %d", i, c.id, c.services, c.permissions, c.line,
				w.id, w.services, w.permissions, w.line)
		}
		if !c.hash.matches(w.secret) || c.hash.matches(w.secret+"x") {
			t.Errorf("client %s: the hash does not match exactly its secret", c.id)
		}
	}
}

var fileLine = regexp.MustCompile(`^testdata/clients/[a-z-]+\.yaml:[0-9]+: `)

// TestReadClientsFileBad checks the messages against golden files: every problem of a file
// is reported at once, each as file:line, and no secretHash value is echoed.
func TestReadClientsFileBad(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"empty", "syntax", "top-level-list", "top-level-keys", "clients-not-list",
		"two-documents", "alias", "entries", "limits"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "clients", name+".yaml")
			clients, err := loadClientsFile(path)
			if err == nil {
				t.Fatalf("got %d clients, no error; want an error", len(clients))
			}
			msg := err.Error()
			golden(t, filepath.Join("clients", name+".err"), msg+"\n")
			for _, line := range strings.Split(msg, "\n") {
				if !fileLine.MatchString(line) {
					t.Errorf("got line %q; want it to start with file:line", line)
				}
			}
			data, _ := os.ReadFile(path)
			for _, m := range regexp.MustCompile(`secretHash: "?([^"\n]+)`).FindAllStringSubmatch(string(data), -1) {
				if strings.Contains(msg, m[1]) {
					t.Errorf("the error quotes the secretHash %q", m[1])
				}
			}
		})
	}
}

func TestReadClientsFileLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxClientsFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "absent.yaml"), "no such file"},
		{"a directory", dir, "not a regular file"},
		{"too large", big, "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadClientsFile(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// loadClientsFile reads and parses the clients file at path, as a reload does.
func loadClientsFile(path string) ([]*client, error) {
	data, err := readClientsFile(path, nil)
	if err != nil {
		return nil, err
	}
	return parseClients(path, data)
}

func TestParseClientsNoneIsEmpty(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"clients: []\n", "clients:\n"} {
		clients, err := parseClients("c.yaml", []byte(doc))
		if err != nil || len(clients) != 0 {
			t.Errorf("%q: got %d clients, %v; want none and no error", doc, len(clients), err)
		}
	}
}

// TestReadmeExample keeps the clients file example of README.md loadable.
func TestReadmeExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no yaml example")
	}
	clients, err := parseClients("README.md", m[1])
	if err != nil || len(clients) != 2 {
		t.Errorf("got %d clients, %v; want the 2 example clients and no error", len(clients), err)
	}
}

func TestParseClientsManyProblems(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("clients:\n")
	for range 30 {
		b.WriteString("  - owner: nobody\n")
	}
	_, err := parseClients("c.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("got nil; want an error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxProblems+1 || lines[maxProblems] != "c.yaml:6: 130 more problems not shown" {
		t.Errorf("got %d lines ending %q; want %d ending c.yaml:6: 130 more problems not shown", len(lines), lines[len(lines)-1], maxProblems+1)
	}
}

func TestParseClientsNotUTF8(t *testing.T) {
	t.Parallel()
	_, err := parseClients("c.yaml", []byte("clients: \xff\xfe\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml: yaml: ") {
		t.Errorf("got %v; want the yaml error prefixed with the file name", err)
	}
}
