package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
)

// Live is the content bundle a service is serving. Reload swaps in a newly loaded bundle
// atomically: a request keeps the bundle it started with, and a directory that fails to load
// leaves the last good bundle in place.
type Live struct {
	dir     string
	current atomic.Pointer[Bundle]
	mu      sync.Mutex        // one Reload at a time
	loaded  [sha256.Size]byte // fingerprint of the files the current bundle came from (under mu)
}

// OpenLive loads the bundle of dir, or the embedded demonstration bundle when dir is "".
func OpenLive(dir string) (*Live, error) {
	l := &Live{dir: dir}
	if dir == "" {
		l.current.Store(Demo())
		l.loaded = demoFingerprint()
		return l, nil
	}
	if _, err := l.Reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// Bundle is the bundle to serve the next request with.
func (l *Live) Bundle() *Bundle { return l.current.Load() }

// Source names where the bundle comes from, for logs.
func (l *Live) Source() string {
	if l.dir == "" {
		return "embedded demonstration bundle"
	}
	return l.dir
}

// Version names the bundle being served: 12 hex digits of the fingerprint of its files (names
// and contents), the same on every replica serving the same files; it changes exactly when a
// reload took a changed bundle. It is the current bundle's Hash: it never waits for a reload.
func (l *Live) Version() string { return l.Bundle().Hash() }

// demoFingerprint is the embedded bundle's fingerprint, as Reload would take it from a copy of
// its files in a directory.
func demoFingerprint() [sha256.Size]byte {
	sub, err := fs.Sub(demoFiles, "demo")
	if err != nil {
		return [sha256.Size]byte{}
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		return [sha256.Size]byte{}
	}
	sum, _ := readBundleFiles(entries, func(name string) ([]byte, error) { return fs.ReadFile(sub, name) }).fingerprint(entries)
	return sum
}

// Reload re-reads the directory and reports whether the bundle changed. Files that are byte for
// byte those of the current bundle are not parsed again: content, not size and mtime, decides,
// so a file rewritten within one mtime tick or restored with its old mtime is still a change.
// Files are read as LoadDir reads them (regular files only, never blocking). The embedded bundle
// never changes.
func (l *Live) Reload() (changed bool, err error) {
	if l.dir == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	entries, err := readDir(l.dir)
	if err != nil {
		return false, fmt.Errorf("load content bundle %s: read bundle directory: %w", l.dir, err)
	}
	files := readBundleFiles(entries, dirReader(l.dir))
	sum, whole := files.fingerprint(entries)
	if whole && l.current.Load() != nil && sum == l.loaded {
		return false, nil
	}
	b, err := loadBundle(entries, files.read)
	if err != nil {
		return false, fmt.Errorf("load content bundle %s: %w", l.dir, err)
	}
	b.hash = hex.EncodeToString(sum[:6]) // before the bundle is published: it never changes after
	l.current.Store(b)
	l.loaded = sum
	return true, nil
}

// readFiles holds, by name, what reading each file that a bundle load reads gave.
type readFiles map[string]readResult

type readResult struct {
	data []byte
	err  error
}

// readBundleFiles reads, once, every file loadBundle would read among entries.
func readBundleFiles(entries []fs.DirEntry, read func(name string) ([]byte, error)) readFiles {
	files := readFiles{}
	for _, e := range entries {
		if reads, known := readsFile(e); reads && known {
			data, err := read(e.Name())
			files[e.Name()] = readResult{data, err}
		}
	}
	return files
}

func (f readFiles) read(name string) ([]byte, error) {
	r, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%s was not read", name) // unreachable: loadBundle reads what readBundleFiles read
	}
	return r.data, r.err
}

// fingerprint hashes the names of the bundle files among entries (unknown ones too: adding one
// is a change) and the contents of those read, in name order; whole is false when a file could
// not be read, and then the sum says nothing.
func (f readFiles) fingerprint(entries []fs.DirEntry) (sum [sha256.Size]byte, whole bool) {
	h := sha256.New()
	for _, e := range entries { // in name order, as readDir lists them
		if reads, _ := readsFile(e); !reads {
			continue
		}
		r := f[e.Name()]
		if r.err != nil {
			return sum, false
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(r.data))
		h.Write(r.data)
	}
	h.Sum(sum[:0])
	return sum, true
}
