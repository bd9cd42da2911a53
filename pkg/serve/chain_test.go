package serve

import (
	"os"
	"strings"
	"testing"
)

// TestUnaryChain: the chain is the one docs/architecture.md lists, in its order.
func TestUnaryChain(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed string
	for _, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(line, "chain: "); ok {
			listed = rest
		}
	}
	s := &Server{}
	var names []string
	for _, step := range s.unaryChain() {
		names = append(names, step.name)
	}
	if got := strings.Join(names, " → "); got != listed {
		t.Errorf("chain: got %q; docs/architecture.md lists %q", got, listed)
	}
}
