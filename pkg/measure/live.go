package measure

import (
	"fmt"
	"sync/atomic"
)

// Live is the content bundle a service is serving. Reload swaps in a newly loaded bundle
// atomically: a request keeps the bundle it started with, and a directory that fails to load
// leaves the last good bundle in place.
type Live struct {
	dir     string
	current atomic.Pointer[Bundle]
}

// OpenLive loads the bundle of dir, or the embedded demonstration bundle when dir is "".
func OpenLive(dir string) (*Live, error) {
	l := &Live{dir: dir}
	if dir == "" {
		l.current.Store(Demo())
		return l, nil
	}
	if err := l.Reload(); err != nil {
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

// Reload re-reads the directory; the embedded bundle never changes.
func (l *Live) Reload() error {
	if l.dir == "" {
		return nil
	}
	b, err := LoadDir(l.dir)
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	l.current.Store(b)
	return nil
}
