package main

import (
	"os"
	"strings"
	"testing"
)

// TestPerformanceDocShowsTheSource: docs/performance.md (make bench-e2e's section) shows this
// reference handler as it is, and it stays within the 60 lines the comparison promises.
func TestPerformanceDocShowsTheSource(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n > 60 {
		t.Errorf("bench/bare/main.go has %d lines; the reference must stay within 60", n)
	}
	doc, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```go\n"+string(src)+"```") {
		t.Error("docs/performance.md does not show bench/bare/main.go as it is: paste it in a ```go block of make bench-e2e's section")
	}
}
