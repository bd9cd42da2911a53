package measure

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
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
	// A copy of the embedded files is the same version as the embedded bundle.
	v0 := live.Version()
	if len(v0) != 12 || v0 != embedded.Version() {
		t.Errorf("version of a copy of the demo files: got %q; want the embedded bundle's %q, 12 hex digits", v0, embedded.Version())
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
	if live.Bundle() != first || live.Version() != v0 {
		t.Errorf("a failed reload replaced the bundle, or its version (%q; want %q)", live.Version(), v0)
	}

	// A polytomous item whose difficulty is not its steps' mean is refused the same way.
	if err := os.WriteFile(items, append(good, []byte("L999999,lexile,Key Ideas,512,400;700\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err = live.Reload()
	if err == nil || changed || !strings.Contains(err.Error(), "items.csv:3543: difficulty 512 is not the mean of the steps (550) within 0.5") {
		t.Fatalf("reload of a bad steps column: got %v; want the items.csv:line error", err)
	}
	if live.Bundle() != first || live.Version() != v0 {
		t.Errorf("a failed reload replaced the bundle, or its version (%q; want %q)", live.Version(), v0)
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
	if v := live.Version(); v == v0 || len(v) != 12 {
		t.Errorf("after a change: got version %q; want a new one, not %q", v, v0)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := OpenLive(missing); err == nil || !strings.Contains(err.Error(), "load content bundle "+missing) {
		t.Errorf("OpenLive of a missing directory: got %v; want an error naming it", err)
	}
}

// reloadPromptly reloads, failing the test if Reload does not return: the bound is far above
// what a reload takes, and far below forever, which is what a blocked open() takes.
func reloadPromptly(t *testing.T, l *Live) (bool, error) {
	t.Helper()
	type result struct {
		changed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		changed, err := l.Reload()
		done <- result{changed, err}
	}()
	select {
	case r := <-done:
		return r.changed, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Reload did not return")
		return false, nil
	}
}

// TestLiveRefusesSpecialFiles: a named pipe (or a device) where the bundle has a file, or
// where the content dir is, is refused at once with what it is, never read, and the last good
// bundle keeps serving; the next good bundle is taken at the first reload after it.
func TestLiveRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"a bundle file is a named pipe", func(t *testing.T, dir string) {
			replaceWithFifo(t, filepath.Join(dir, "items.csv"))
		}, "items.csv: is a named pipe, not a regular file"},
		{"a bundle file links to a device", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "forms.csv")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "forms.csv")); err != nil {
				t.Fatal(err)
			}
		}, "forms.csv: is a character device, not a regular file"},
		{"an unknown name is a named pipe", func(t *testing.T, dir string) {
			mkfifo(t, filepath.Join(dir, "extra.csv"))
		}, "extra.csv: unknown bundle file"},
		{"the content dir is a named pipe", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, dir)
		}, "read bundle directory: is a named pipe, not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "content")
			if err := democontent.Write(dir); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, filepath.Join(dir, ".hidden.csv")) // hidden: never opened
			live, err := OpenLive(dir)
			if err != nil {
				t.Fatal(err)
			}
			first := live.Bundle()
			tc.setup(t, dir)
			for range 2 {
				changed, err := reloadPromptly(t, live)
				if want := "load content bundle " + dir + ": " + tc.want; changed || err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got changed=%v, %v; want an error containing %q", changed, err, want)
				}
			}
			if live.Bundle() != first {
				t.Error("a refused reload replaced the bundle")
			}
			if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadDir: got %v; want an error containing %q", err, tc.want)
			}
			// A good bundle again, with L000001 removed.
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := democontent.Write(dir); err != nil {
				t.Fatal(err)
			}
			items := filepath.Join(dir, "items.csv")
			data, err := os.ReadFile(items)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(items, regexp.MustCompile(`(?m)^L000001,.*\n`).ReplaceAll(data, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			if changed, err := reloadPromptly(t, live); !changed || err != nil {
				t.Fatalf("the good bundle back: got changed=%v, %v; want changed", changed, err)
			}
			if _, ok := live.Bundle().Item("L000001"); ok {
				t.Error("L000001 still served after its removal")
			}
		})
	}
}

// TestLiveKeysOnContent: an unchanged dir is not parsed again (the same bundle stays), a touch
// is not a change, and a change that keeps the size and the mtime is one.
func TestLiveKeysOnContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := democontent.Write(dir); err != nil {
		t.Fatal(err)
	}
	live, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := live.Bundle()
	items := filepath.Join(dir, "items.csv")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(items, later, later); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); changed || err != nil || live.Bundle() != first {
		t.Fatalf("touched: got changed=%v, %v; want the same bundle, not parsed again", changed, err)
	}
	before, err := os.Stat(items)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(items)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := first.Item("L000002")
	if it.Difficulty != 616 {
		t.Fatalf("setup: L000002 has difficulty %v; want 616", it.Difficulty)
	}
	data = bytes.Replace(data, []byte("L000002,lexile,Key Ideas,616,\n"), []byte("L000002,lexile,Key Ideas,617,\n"), 1)
	if err := os.WriteFile(items, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(items, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(items)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("setup: got size %d, mtime %v; want %d, %v", after.Size(), after.ModTime(), before.Size(), before.ModTime())
	}
	if changed, err := live.Reload(); !changed || err != nil {
		t.Fatalf("same size and mtime, other content: got changed=%v, %v; want changed", changed, err)
	}
	if it, _ := live.Bundle().Item("L000002"); it.Difficulty != 617 {
		t.Errorf("after the change: got difficulty %v; want 617", it.Difficulty)
	}
}

// TestLiveFollowsASymlinkSwap: a ConfigMap volume updates by pointing ..data at a new
// directory; each file is a symlink through ..data.
func TestLiveFollowsASymlinkSwap(t *testing.T) {
	t.Parallel()
	vol := t.TempDir()
	version := func(name string, edit func(items []byte) []byte) {
		t.Helper()
		dir := filepath.Join(vol, name)
		if err := democontent.Write(dir); err != nil {
			t.Fatal(err)
		}
		items := filepath.Join(dir, "items.csv")
		data, err := os.ReadFile(items)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(items, edit(data), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(vol, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(vol, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_11_22_10_15_00.1", func(b []byte) []byte { return b })
	entries, err := os.ReadDir(filepath.Join(vol, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join("..data", e.Name()), filepath.Join(vol, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	live, err := OpenLive(vol)
	if err != nil {
		t.Fatal(err)
	}
	version("..2026_11_22_10_16_00.2", func(b []byte) []byte {
		return append(b, "L999999,lexile,Key Ideas,512\n"...)
	})
	if err := os.RemoveAll(filepath.Join(vol, "..2026_11_22_10_15_00.1")); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); !changed || err != nil {
		t.Fatalf("after the swap: got changed=%v, %v; want changed", changed, err)
	}
	if _, ok := live.Bundle().Item("L999999"); !ok {
		t.Error("after the swap: the new item is not served")
	}
	if changed, err := live.Reload(); changed || err != nil {
		t.Errorf("again: got changed=%v, %v; want unchanged", changed, err)
	}
}

func replaceWithFifo(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, path)
}

// TestVersionIsTheBundles: the version is read from the bundle being served, so it never waits
// for a reload in progress (which holds the reload lock while it reads and parses the files), a
// program's view names the same bundle, and the embedded bundle's hash is its files'.
func TestVersionIsTheBundles(t *testing.T) {
	t.Parallel()
	l, err := OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	if sum := demoFingerprint(); l.Version() != hex.EncodeToString(sum[:6]) || len(l.Version()) != 12 {
		t.Fatalf("demo version %q; want the first 12 hex digits of its fingerprint %x", l.Version(), sum)
	}
	l.mu.Lock() // as a reload does for as long as it reads and parses
	got := make(chan string, 1)
	go func() { got <- l.Version() }()
	select {
	case v := <-got:
		if v != l.Bundle().Hash() {
			t.Errorf("Version during a reload: got %q; want the served bundle's %q", v, l.Bundle().Hash())
		}
	case <-time.After(5 * time.Second):
		t.Error("Version waited for the reload lock")
	}
	l.mu.Unlock()
	b, err := LoadFS(withPrograms())
	if err != nil {
		t.Fatal(err)
	}
	b.hash = "0123456789ab" // as Live sets it before publishing
	if v := b.View(ProgramSet("acme")); v == b || v.Hash() != b.Hash() {
		t.Errorf("view's hash %q; want the bundle's %q", v.Hash(), b.Hash())
	}
}
