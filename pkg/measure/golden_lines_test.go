package measure

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// goldenLines is the differential tests' recorded answers: with update it writes got to file (the
// build whose answers stand) and returns nil; otherwise it reads file's lines, failing the test
// unless there are as many as got and at least least.
func goldenLines(t *testing.T, file string, got []string, update bool, least int) []string {
	t.Helper()
	if update {
		if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var want []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < least {
		t.Fatalf("%s: got %d lines; want %d (and at least %d)", file, len(got), len(want), least)
	}
	return want
}
