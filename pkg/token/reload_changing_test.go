package token

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestReloadRefusesAFileChangingWhileRead: a clients file written in place while a reload reads
// it (here, between the read and the stat after it) is refused, whatever the change, and the last
// good clients stay; the next reload, the file still, takes it. The writes below are the ways a
// file changes in place: cut short (a writer half done), grown, or rewritten at the same size.
func TestReloadRefusesAFileChangingWhileRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string, full []byte)
	}{
		{"cut short", func(t *testing.T, path string, full []byte) { rewrite(t, path, full[:len(full)/2]) }},
		{"grown", func(t *testing.T, path string, full []byte) { rewrite(t, path, append(full, "\n# more\n"...)) }},
		{"same size, new mtime", func(t *testing.T, path string, full []byte) {
			rewrite(t, path, full)
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file", func(t *testing.T, path string, full []byte) {
			tmp := path + ".new"
			rewrite(t, tmp, full)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tok, err := f.Authenticate("north", "north-secret", ServiceScoring, "10.7.0.2")
			if err != nil {
				t.Fatal(err)
			}
			writeClients(t, f.dir, acme) // north removed: what the reload reads
			full, err := os.ReadFile(f.clients)
			if err != nil {
				t.Fatal(err)
			}
			f.afterRead = func() { tc.change(t, f.clients, full) }
			changed, err := f.Reload()
			if changed || !errors.Is(err, ErrFileChanging) {
				t.Fatalf("file changed mid-read: got changed=%v, %v; want unchanged and ErrFileChanging", changed, err)
			}
			if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
				t.Errorf("after the refused read: got %v; want north still served by the last good clients", err)
			}
			f.afterRead = nil
			rewrite(t, f.clients, full)
			if changed, err := f.Reload(); !changed || err != nil {
				t.Fatalf("the file still: got changed=%v, %v; want changed, no error", changed, err)
			}
			if _, err := f.Verify(tok.AccessToken, ServiceScoring); err == nil {
				t.Error("north after the file was taken: got verified; want refused")
			}
		})
	}
}

// TestReloadTakesAStillFile: the boundary's other side: a read with nothing changing around it
// is taken (the stats before and after agree).
func TestReloadTakesAStillFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	calls := 0
	f.afterRead = func() { calls++ }
	writeClients(t, f.dir, acme)
	if changed, err := f.Reload(); !changed || err != nil {
		t.Fatalf("got changed=%v, %v; want changed, no error", changed, err)
	}
	if calls != 1 {
		t.Errorf("the seam ran %d times; want 1 (it must sit in the read the test means)", calls)
	}
}

// TestChangedAndValidUntil: Changed is closed by a reload that replaces the clients, not by
// one that finds them unchanged; ValidUntil is exp plus the leeway, the instant Verify starts
// refusing.
func TestChangedAndValidUntil(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.TTL, o.Leeway = time.Minute, 5*time.Second })
	ch := f.Changed()
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("Changed closed by a reload that changed nothing")
	default:
	}
	writeClients(t, f.dir, acme)
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed not closed by a reload that replaced the clients")
	}
	if f.Changed() == ch {
		t.Error("Changed after the reload: got the closed channel; want a new one")
	}
	tok, err := f.Authenticate("acme-reader", "acme-secret", ServiceScoring, "10.7.0.3")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := f.Verify(tok.AccessToken, ServiceScoring)
	if err != nil {
		t.Fatal(err)
	}
	until := f.ValidUntil(claims)
	if want := f.clock.Now().Truncate(time.Second).Add(time.Minute + 5*time.Second); !until.Equal(want) {
		t.Errorf("ValidUntil: got %s; want %s (exp + leeway)", until, want)
	}
	f.clock.Advance(until.Sub(f.clock.Now()) - time.Millisecond)
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); err != nil {
		t.Errorf("1 ms before ValidUntil: got %v; want verified", err)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := f.Verify(tok.AccessToken, ServiceScoring); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("at ValidUntil: got %v; want ErrTokenExpired", err)
	}
}

func rewrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
