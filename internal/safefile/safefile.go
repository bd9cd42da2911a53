// Package safefile reads the files an operator's paths point at (pkg/token's clients file and
// keys dir, pkg/measure's content dir), at start and at every reload. Whatever is found there, a
// read must end: a named pipe, a device or a socket is refused without being read, and a hung
// mount is given up on. Its own refusals leave the path out (the os package's errors name it as
// usual): pkg/measure's caller names the file, pkg/token puts the path in front.
package safefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stuckReads holds the paths whose read outlived its time bound and has not returned yet: a
// later read of the same path is refused at once, so a hung mount costs one goroutine, not one
// per reload interval.
var stuckReads sync.Map

// Read reads a regular file (following symlinks) of at most limit bytes, giving up after
// timeout. A local file of a few MiB takes milliseconds; the bound is for a mount that hangs (a
// stalled network or FUSE filesystem), so that a reload reports it and the last good version
// keeps serving.
func Read(path string, limit int64, timeout time.Duration) ([]byte, error) {
	return withinTime(path, timeout, func() ([]byte, error) { return readRegular(path, limit) })
}

// ReadDir lists a directory (following symlinks) in name order, as os.ReadDir does, giving up
// after timeout.
func ReadDir(dir string, timeout time.Duration) ([]fs.DirEntry, error) {
	return withinTime(dir, timeout, func() ([]fs.DirEntry, error) {
		f, err := openChecked(dir, fs.FileMode.IsDir, "a directory")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		entries, err := f.ReadDir(-1)
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		return entries, err
	})
}

// openChecked opens path without blocking and refuses it, closed, unless its mode passes is.
// O_NONBLOCK makes opening a named pipe return at once instead of waiting for a writer; the
// check is of the opened file, so a swap of the path after a check cannot fool it.
func openChecked(path string, is func(fs.FileMode) bool, want string) (*os.File, error) {
	// O_NOCTTY: a terminal device at path must not become the process's controlling terminal.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !is(info.Mode()) {
		err = fmt.Errorf("is %s, not %s", kindOf(info.Mode()), want)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readRegular(path string, limit int64) ([]byte, error) {
	f, err := openChecked(path, fs.FileMode.IsRegular, "a regular file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// withinTime runs read, giving up after timeout; a read given up on finishes (and closes its
// file) in the background, and until it does, path is not read again.
func withinTime[T any](path string, timeout time.Duration, read func() (T, error)) (T, error) {
	var zero T
	if _, stuck := stuckReads.Load(path); stuck {
		return zero, fmt.Errorf("an earlier read has not returned yet (more than %s); is its mount hung?", timeout)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
	}
	stuckReads.Store(path, true)
	go func() {
		<-done
		stuckReads.Delete(path)
	}()
	return zero, fmt.Errorf("not read within %s; is its mount hung?", timeout)
}

// kindOf names what a file is, for the line that refuses it.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	default:
		return "a special file"
	}
}
