package measure

import (
	"io/fs"
	"time"

	"github.com/yardstick-dev/yardstick/internal/safefile"
)

// A content dir is read at start and at every reload, from a path an operator (or a mistaken
// mount) controls: internal/safefile refuses what is not a regular file without reading it and
// gives up on a hung mount. Its messages leave out the path: the caller names the file.

// fileReadTimeout bounds the open and read of one file or directory (see safefile.Read).
const fileReadTimeout = 5 * time.Second

// readCapped reads a regular file (following symlinks) of at most limit bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	return safefile.Read(path, limit, fileReadTimeout)
}

// readDir lists a directory (following symlinks) in name order.
func readDir(dir string) ([]fs.DirEntry, error) { return safefile.ReadDir(dir, fileReadTimeout) }
