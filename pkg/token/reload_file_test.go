package token

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reloadPromptly reloads, failing the test if Reload does not return: the bound is far above
// what a reload takes, and far below forever, which is what a blocked open() takes.
func reloadPromptly(t *testing.T, f *fixture) (bool, error) {
	t.Helper()
	type result struct {
		changed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		changed, err := f.Reload()
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

// TestReloadPastANamedPipe is the attack of issue 19: a named pipe placed at the clients path
// made the reload block forever in open(), so a client removed afterwards kept its access.
// Now the pipe is refused at every reload, with what it is, the last good clients serve, and
// the removal takes effect at the first reload after the pipe is replaced by a file.
func TestReloadPastANamedPipe(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.7.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.clients); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, f.clients)
	for range 3 {
		changed, err := reloadPromptly(t, f)
		if want := f.clients + ": is a named pipe, not a regular file"; changed || err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("with a named pipe at the clients path: got changed=%v, %v; want unchanged and an error containing %q", changed, err, want)
		}
	}
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("with the named pipe: got %v; want the last good clients serving", err)
	}
	if err := os.Remove(f.clients); err != nil {
		t.Fatal(err)
	}
	writeClients(t, f.dir, acme) // north removed
	if changed, err := reloadPromptly(t, f); !changed || err != nil {
		t.Fatalf("the file back without north: got changed=%v, %v; want changed", changed, err)
	}
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err == nil || err.Error() != "not authenticated: client no longer registered" {
		t.Errorf("north's token after its removal: got %v; want client no longer registered", err)
	}
	if _, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.7.0.1"); !errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("north's login after its removal: got %v; want ErrNotAuthenticated", err)
	}
}

// TestReloadRefusesSpecialFilesInKeys: the same for the keys dir and its files; the clients
// file is judged on its own.
func TestReloadRefusesSpecialFilesInKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture) (want string)
	}{
		{"a key file is a named pipe", func(t *testing.T, f *fixture) string {
			mkfifo(t, filepath.Join(f.keysDir, "k2.pem"))
			return filepath.Join(f.keysDir, "k2.pem") + ": is a named pipe, not a regular file"
		}},
		{"the keys dir is a named pipe", func(t *testing.T, f *fixture) string {
			if err := os.Rename(f.keysDir, f.keysDir+".old"); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, f.keysDir)
			return "keys dir: " + f.keysDir + ": is a named pipe, not a directory"
		}},
		{"a key file links to a device", func(t *testing.T, f *fixture) string {
			if err := os.Symlink("/dev/zero", filepath.Join(f.keysDir, "k2.pem")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(f.keysDir, "k2.pem") + ": is a character device, not a regular file"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			want := tc.setup(t, f)
			writeClients(t, f.dir, acme) // a good change alongside
			changed, err := reloadPromptly(t, f)
			if !changed || err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got changed=%v, %v; want changed (the clients) and an error containing %q", changed, err, want)
			}
			if got := f.Summary(); got != "1 client, 1 key (signing kid=k1)" {
				t.Errorf("got %q; want the new clients and the last good keys", got)
			}
		})
	}
}

// TestReloadSkipsUnchangedFiles: files byte for byte those loaded are not parsed again (the
// registry and the key set, with its cache of verified tokens, stay the same objects); a
// touch is not a change; a change that keeps the size and the mtime is one.
func TestReloadSkipsUnchangedFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg, keys := f.state.Load().clients, f.state.Load().keys
	unchanged := func(when string) {
		t.Helper()
		changed, err := f.Reload()
		st := f.state.Load()
		if changed || err != nil || st.clients != reg || st.keys != keys {
			t.Errorf("%s: got changed=%v, %v, same registry %v, same keys %v; want nothing parsed again",
				when, changed, err, st.clients == reg, st.keys == keys)
		}
	}
	unchanged("files as loaded")

	data, err := os.ReadFile(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.WriteFile(f.clients, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.clients, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(f.keysDir, "k1.pem"), later, later); err != nil {
		t.Fatal(err)
	}
	unchanged("rewritten with the same bytes, touched")

	// north becomes south: same size; the mtime is set back to what it was.
	before, err := os.Stat(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.clients, bytes.Replace(data, []byte("clientId: north"), []byte("clientId: south"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.clients, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("setup: got size %d, mtime %v; want %d, %v", after.Size(), after.ModTime(), before.Size(), before.ModTime())
	}
	if changed, err := f.Reload(); !changed || err != nil || f.state.Load().keys != keys {
		t.Fatalf("same size and mtime, other content: got changed=%v, %v; want the clients changed, the keys kept", changed, err)
	}
	if _, err := f.Authenticate("south", "north-secret", ServiceScoring, "10.7.0.2"); err != nil {
		t.Errorf("south after the change: got %v; want a token", err)
	}
	reg = f.state.Load().clients
	unchanged("after the change")

	// A key replaced by another of the same size, mtime set back.
	k1 := filepath.Join(f.keysDir, "k1.pem")
	before, err = os.Stat(k1)
	if err != nil {
		t.Fatal(err)
	}
	oldPub := keys.public["k1"]
	writeKey(t, f.keysDir, "k1")
	if err := os.Chtimes(k1, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if changed, err := f.Reload(); !changed || err != nil || f.state.Load().keys.public["k1"].Equal(oldPub) {
		t.Fatalf("a key of the same size and mtime, other content: got changed=%v, %v; want the new key", changed, err)
	}
	if f.state.Load().clients != reg {
		t.Error("a keys change parsed the unchanged clients file again")
	}
}

// TestReloadFollowsASymlinkSwap: a Kubernetes Secret or ConfigMap volume updates by pointing
// ..data at a new directory; the file's path, a symlink through ..data, is followed.
func TestReloadFollowsASymlinkSwap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	vol := filepath.Join(f.dir, "vol")
	version := func(name string, clients ...testClient) {
		t.Helper()
		dir := filepath.Join(vol, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		writeClients(t, dir, clients...)
		tmp := filepath.Join(vol, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(vol, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_11_22_10_15_00.1", acme, north)
	path := filepath.Join(vol, "clients.yaml")
	if err := os.Symlink(filepath.Join("..data", "clients.yaml"), path); err != nil {
		t.Fatal(err)
	}
	i, err := New(Options{ClientsFile: path, KeysDir: f.keysDir, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	version("..2026_11_22_10_16_00.2", acme)
	if err := os.RemoveAll(filepath.Join(vol, "..2026_11_22_10_15_00.1")); err != nil {
		t.Fatal(err)
	}
	if changed, err := i.Reload(); !changed || err != nil {
		t.Fatalf("after the swap: got changed=%v, %v; want changed", changed, err)
	}
	if got := i.Summary(); got != "1 client, 1 key (signing kid=k1)" {
		t.Errorf("after the swap: got %q; want north gone", got)
	}
	if changed, err := i.Reload(); changed || err != nil {
		t.Errorf("again: got changed=%v, %v; want unchanged", changed, err)
	}
}

// TestReloadDevModeWithoutFiles: nothing to read, nothing ever changes.
func TestReloadDevModeWithoutFiles(t *testing.T) {
	t.Parallel()
	i, err := New(Options{Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	st := i.state.Load()
	for range 2 {
		if changed, err := i.Reload(); changed || err != nil || i.state.Load() != st {
			t.Errorf("got changed=%v, %v; want unchanged", changed, err)
		}
	}
}
