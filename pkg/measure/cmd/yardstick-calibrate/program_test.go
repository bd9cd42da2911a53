package main

import (
	"path/filepath"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// TestRunProgram: -program writes the program column for the items the run adds, which a client
// without the program does not see; a run without -program adds shared items.
func TestRunProgram(t *testing.T) {
	t.Parallel()
	first := filepath.Join(t.TempDir(), "first")
	if _, _, err := call(t, "-new-framework", "acme-math", "-subject", "math", "-label", "AM", "-units-per-logit", "120",
		"-mean", "600", "-program", "acme", "-out", first, booklets); err != nil {
		t.Fatal(err)
	}
	b, err := measure.LoadDir(first)
	if err != nil {
		t.Fatal(err)
	}
	items := b.Items(measure.ItemQuery{Framework: "acme-math", Limit: 1000}).Items
	for _, it := range items {
		if it.Program != "acme" {
			t.Errorf("%s: program %q; want acme", it.ID, it.Program)
		}
	}
	if got := b.View(measure.Programs{}).Items(measure.ItemQuery{Framework: "acme-math", Limit: 1000}).Items; len(got) != 0 {
		t.Errorf("a client without programs sees %d items; want none", len(got))
	}
	// Without -program the items added are shared: the bundle has no program at all.
	second := filepath.Join(t.TempDir(), "second")
	if _, _, err := call(t, "-framework", "quantile", "-mean", "700", "-out", second, booklets); err != nil {
		t.Fatal(err)
	}
	b2, err := measure.LoadDir(second)
	if err != nil {
		t.Fatal(err)
	}
	if len(b2.Programs()) != 0 {
		t.Errorf("a run without -program: programs %v; want none", b2.Programs())
	}
}
