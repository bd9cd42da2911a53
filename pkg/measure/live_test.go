package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLive(t *testing.T) {
	t.Parallel()
	embedded, err := OpenLive("")
	changed, rerr := embedded.Reload()
	if err != nil || embedded.Bundle() != Demo() || changed || rerr != nil || embedded.Source() != "embedded demonstration bundle" {
		t.Fatalf("embedded: got %v, %v; want the demo bundle, reload a no-op", embedded, err)
	}

	dir := t.TempDir()
	entries, err := demoFiles.ReadDir("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := demoFiles.ReadFile("demo/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := OpenLive(dir)
	if err != nil {
		t.Fatalf("OpenLive(%s): %v", dir, err)
	}
	first := live.Bundle()
	if _, ok := first.Item("L000001"); !ok {
		t.Fatal("loaded bundle lacks L000001")
	}
	if changed, err := live.Reload(); changed || err != nil || live.Bundle() != first {
		t.Errorf("reload of unchanged files: got changed=%v, %v; want the same bundle, not re-parsed", changed, err)
	}

	// A broken file: Reload reports it with file:line and the last good bundle keeps serving.
	items := filepath.Join(dir, "items.csv")
	good, _ := os.ReadFile(items)
	if err := os.WriteFile(items, append(good, []byte("L999999,lexile,Key Ideas,not-a-number\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err = live.Reload()
	if err == nil || changed || !strings.Contains(err.Error(), "items.csv:") {
		t.Fatalf("reload of a broken file: got %v; want an items.csv:line error", err)
	}
	if live.Bundle() != first {
		t.Error("a failed reload replaced the bundle")
	}

	// A good change is taken.
	if err := os.WriteFile(items, append(good, []byte("L999999,lexile,Key Ideas,512\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); err != nil || !changed {
		t.Fatalf("reload of a good change: got changed=%v, %v; want changed", changed, err)
	}
	if it, ok := live.Bundle().Item("L999999"); !ok || it.Difficulty != 512 {
		t.Errorf("after reload: got %+v, %v; want the new item", it, ok)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := OpenLive(missing); err == nil || !strings.Contains(err.Error(), "load content bundle "+missing) {
		t.Errorf("OpenLive of a missing directory: got %v; want an error naming it", err)
	}
}
