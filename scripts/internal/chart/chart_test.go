package chart

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want float64 }{
		{1, 1}, {1.01, 2}, {2, 2}, {2.5, 5}, {5, 5}, {5.01, 10}, {37, 50}, {120, 200}, {0.3, 0.5},
	} {
		if got := NiceStep(tc.raw); got != tc.want {
			t.Errorf("NiceStep(%g): got %g; want %g", tc.raw, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	if got := GradeName(0); got != "grade K" {
		t.Errorf("GradeName(0): got %q; want grade K", got)
	}
	if got := GradeName(12); got != "grade 12" {
		t.Errorf("GradeName(12): got %q; want grade 12", got)
	}
	if Sep(0) != "" || Sep(1) != " " {
		t.Errorf("Sep: got %q, %q; want \"\", \" \"", Sep(0), Sep(1))
	}
}

// TestRun: the files read, check's refusal passed on, the picture written to the file asked.
func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	req, ans := filepath.Join(dir, "req.json"), filepath.Join(dir, "ans.json")
	for p, body := range map[string]string{req: `{"n":2}`, ans: `{"n":3}`} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type doc struct{ N int }
	draw := func(w io.Writer, r, a doc) error {
		_, err := io.WriteString(w, strings.Repeat("x", r.N+a.N))
		return err
	}
	ok := func(_, _ string, _, _ doc) error { return nil }
	out := filepath.Join(dir, "out.svg")
	if err := Run(req, ans, out, ok, draw); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "xxxxx" {
		t.Errorf("got %q written; want the drawing of both files (xxxxx)", got)
	}
	refuse := func(_, ansPath string, _, _ doc) error { return errors.New(ansPath + ": nothing to draw") }
	if err := Run(req, ans, filepath.Join(dir, "no.svg"), refuse, draw); err == nil || !strings.Contains(err.Error(), "ans.json: nothing to draw") {
		t.Errorf("got %v; want check's refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "no.svg")); !os.IsNotExist(err) {
		t.Errorf("a refused chart left a file: %v", err)
	}
	if err := Run("", ans, out, ok, draw); err == nil || !strings.Contains(err.Error(), "-request and -answer are required") {
		t.Errorf("got %v; want the flags named", err)
	}
	if err := Run(req, filepath.Join(dir, "missing.json"), out, ok, draw); err == nil {
		t.Error("got no error for a missing answer file")
	}
}
