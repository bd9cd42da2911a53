package measure

import (
	"bufio"
	"fmt"
	"math/rand/v2"
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

// walkSession runs an adaptive session to its stop, answering each item with a score drawn from
// rng, and writes it as a differential line: the name, each item picked, and the stop reason.
func walkSession(t *testing.T, bk *Bank, req *AdaptiveRequest, rng *rand.Rand, name string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(name)
	for {
		step, err := bk.Next(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if step.Next == nil {
			fmt.Fprintf(&sb, " stop:%s", step.StopReason)
			return sb.String()
		}
		fmt.Fprintf(&sb, " %s", step.Next.ID)
		req.Items = append(req.Items, Response{ID: step.Next.ID, Score: rng.IntN(step.Next.MaxScore() + 1)})
	}
}
