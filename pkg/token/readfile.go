package token

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/yardstick-dev/yardstick/internal/safefile"
)

// The clients file and the keys dir are read at start and at every reload, from paths an
// operator (or a mistaken mount) controls: internal/safefile refuses what is not a regular file
// without reading it and gives up on a hung mount. Every message here begins with the path, so
// that a reload's error says which file failed.

// fileReadTimeout bounds the open and read of one file or directory (see safefile.Read).
const fileReadTimeout = 5 * time.Second

// readCapped reads a regular file (following symlinks) of at most limit bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	data, err := safefile.Read(path, limit, fileReadTimeout)
	return data, named(path, err)
}

// readDir lists a directory (following symlinks) in name order.
func readDir(dir string) ([]fs.DirEntry, error) {
	entries, err := safefile.ReadDir(dir, fileReadTimeout)
	return entries, named(dir, err)
}

// named puts the path in front of safefile's own refusals; the os package's errors name it
// already.
func named(path string, err error) error {
	var pathErr *fs.PathError
	if err == nil || errors.As(err, &pathErr) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
