package forecast

import (
	"fmt"
	"sync/atomic"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// Content is the content bundle in use. Reload swaps in a newly loaded bundle atomically; a
// request keeps the bundle it started with, and a broken directory leaves the last good one.
type Content struct {
	dir     string
	current atomic.Pointer[measure.Bundle]
}

// LoadContent loads the bundle of dir, or the embedded demonstration bundle when dir is "".
func LoadContent(dir string) (*Content, error) {
	c := &Content{dir: dir}
	if dir == "" {
		c.current.Store(measure.Demo())
		return c, nil
	}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Bundle is the bundle to serve the next request with.
func (c *Content) Bundle() *measure.Bundle { return c.current.Load() }

// Reload re-reads the directory; the embedded bundle never changes.
func (c *Content) Reload() error {
	if c.dir == "" {
		return nil
	}
	b, err := measure.LoadDir(c.dir)
	if err != nil {
		return fmt.Errorf("load content bundle %s: %w", c.dir, err)
	}
	c.current.Store(b)
	return nil
}
