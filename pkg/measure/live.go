package measure

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Live is the content bundle a service is serving. Reload swaps in a newly loaded bundle
// atomically: a request keeps the bundle it started with, and a directory that fails to load
// leaves the last good bundle in place.
type Live struct {
	dir     string
	current atomic.Pointer[Bundle]
	mu      sync.Mutex
	loaded  [sha256.Size]byte // fingerprint of the files the current bundle came from
}

// OpenLive loads the bundle of dir, or the embedded demonstration bundle when dir is "".
func OpenLive(dir string) (*Live, error) {
	l := &Live{dir: dir}
	if dir == "" {
		l.current.Store(Demo())
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

// Reload re-reads the directory and reports whether the bundle changed. Files that are byte for
// byte those of the current bundle are not parsed again. The embedded bundle never changes.
func (l *Live) Reload() (changed bool, err error) {
	if l.dir == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A directory that cannot be read is LoadDir's to report, with its usual message.
	sum, sumErr := fingerprint(os.DirFS(l.dir))
	if sumErr == nil && l.current.Load() != nil && sum == l.loaded {
		return false, nil
	}
	b, err := LoadDir(l.dir)
	if err != nil {
		return false, err
	}
	if sumErr != nil {
		return false, fmt.Errorf("load content bundle %s: %w", l.dir, sumErr)
	}
	l.current.Store(b)
	l.loaded = sum
	return true, nil
}

// fingerprint hashes the names and contents of the bundle files of a directory (the files
// LoadFS reads: not hidden, ending in .csv), in name order.
func fingerprint(fsys fs.FS) ([sha256.Size]byte, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	h := sha256.New()
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".csv") {
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
