package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheSource: the README's performance section shows this reference handler as it
// is, and it stays within the 60 lines the comparison promises.
func TestREADMEShowsTheSource(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n > 60 {
		t.Errorf("bench/bare/main.go has %d lines; the reference must stay within 60", n)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(src)+"```") {
		t.Error("README.md does not show bench/bare/main.go as it is: paste it in a ```go block of the performance section")
	}
}
