package scripts

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestMakeHelp: `make help` into a pipe has no colour codes, every description starts in one
// column, every documented target is listed, and the ci line names every target ci runs.
func TestMakeHelp(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("make", "--no-print-directory", "help")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	help := string(out)
	makefile, err := os.ReadFile(root + "/Makefile")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("no colour into a pipe", func(t *testing.T) {
		t.Parallel()
		if strings.Contains(help, "\033") {
			t.Errorf("got escape codes in piped output:\n%q", help)
		}
	})
	t.Run("aligned", func(t *testing.T) {
		t.Parallel()
		line := regexp.MustCompile(`^  (\S+)( +)\S`)
		col := -1
		for _, l := range strings.Split(strings.TrimRight(help, "\n"), "\n") {
			m := line.FindStringSubmatchIndex(l)
			if m == nil {
				t.Fatalf("line %q is not '  target  description'", l)
			}
			if start := m[5]; col == -1 {
				col = start
			} else if start != col {
				t.Errorf("description of %q starts at column %d; want %d", l, start, col)
			}
		}
	})
	t.Run("every documented target", func(t *testing.T) {
		t.Parallel()
		for _, m := range regexp.MustCompile(`(?m)^([a-zA-Z0-9_.-]+):.*## `).FindAllStringSubmatch(string(makefile), -1) {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(m[1]) + ` `).MatchString(help) {
				t.Errorf("make help lacks target %q", m[1])
			}
		}
	})
	t.Run("ci line names every check", func(t *testing.T) {
		t.Parallel()
		deps := regexp.MustCompile(`(?m)^ci:([^#]*)##`).FindStringSubmatch(string(makefile))
		if deps == nil {
			t.Fatal("no ci target in the Makefile")
		}
		ciLine := regexp.MustCompile(`(?m)^  ci .*$`).FindString(help)
		fields := strings.Fields(deps[1])
		if len(fields) < 5 {
			t.Fatalf("got ci prerequisites %q; want the checks", fields)
		}
		for _, d := range fields {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(d) + `\b`).MatchString(ciLine) {
				t.Errorf("ci line %q lacks %q", ciLine, d)
			}
		}
	})
}
