package safefile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a named pipe at path that no one ever writes to: opening it for reading the
// ordinary way blocks forever.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReadRefusesSpecialFiles: whatever is found at the path, the read ends at once, and
// what is not a regular file is refused with what it is. (A named pipe read the ordinary way
// would block forever; the bound of the test is far above the microseconds the refusal takes.)
func TestReadRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	linkToFifo := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, linkToFifo); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		limit      int64
		want       string // "" = read
	}{
		{"named pipe", fifo, 100, "is a named pipe, not a regular file"},
		{"symlink to a named pipe", linkToFifo, 100, "is a named pipe, not a regular file"},
		{"socket", sock, 100, "open " + sock + ": no such device or address"}, // a socket cannot be opened at all
		{"character device", "/dev/null", 100, "is a character device, not a regular file"},
		{"directory", dir, 100, "is a directory, not a regular file"},
		{"regular at the limit", regular, 10, ""},
		{"regular one byte over", regular, 9, "larger than 9 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, err := Read(tc.path, tc.limit, time.Minute)
				done <- result{data, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Read did not return")
			}
			switch {
			case tc.want == "" && (r.err != nil || string(r.data) != "0123456789"):
				t.Errorf("got %q, %v; want the file", r.data, r.err)
			case tc.want != "" && (r.err == nil || r.err.Error() != tc.want):
				t.Errorf("got %v; want %q (the path left to the caller)", r.err, tc.want)
			}
		})
	}
}

func TestReadDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"b", "c", "a"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ReadDir(dir, time.Minute)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if err != nil || strings.Join(names, ",") != "a,b,c" {
		t.Errorf("got %q, %v; want a,b,c in name order", names, err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	mkfifo(t, fifo)
	for path, want := range map[string]string{
		fifo:                      "is a named pipe, not a directory",
		filepath.Join(dir, "a"):   "is a regular file, not a directory",
		filepath.Join(dir, "zzz"): "no such file or directory",
	} {
		if _, err := ReadDir(path, time.Minute); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadDir(%s): got %v; want an error containing %q", path, err, want)
		}
	}
}

// TestWithinTime: a read that hangs (a stalled mount) is given up on after the bound, and its
// path is refused at once until it returns; then it is read again.
func TestWithinTime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hung")
	release := make(chan struct{})
	hung := func() (string, error) {
		<-release
		return "late", nil
	}
	if _, err := withinTime(path, 10*time.Millisecond, hung); err == nil || err.Error() != "not read within 10ms; is its mount hung?" {
		t.Fatalf("got %v; want not read within 10ms", err)
	}
	quick := func() (string, error) { return "quick", nil }
	if _, err := withinTime(path, time.Minute, quick); err == nil || !strings.Contains(err.Error(), "an earlier read has not returned yet") {
		t.Fatalf("while the first read hangs: got %v; want refused at once", err)
	}
	if v, err := withinTime(path+"-other", time.Minute, quick); err != nil || v != "quick" {
		t.Errorf("another path: got %q, %v; want it read", v, err)
	}
	release <- struct{}{} // the hung read returns
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, stuck := stuckReads.Load(path); !stuck {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hung read returned, but its path is still marked")
		}
		time.Sleep(time.Millisecond)
	}
	if v, err := withinTime(path, time.Minute, quick); err != nil || v != "quick" {
		t.Errorf("after the hung read returned: got %q, %v; want it read", v, err)
	}
	failing := func() (string, error) { return "", errors.New("boom") }
	if _, err := withinTime(path, time.Minute, failing); err == nil || err.Error() != "boom" {
		t.Errorf("got %v; want the read's own error", err)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for mode, want := range map[fs.FileMode]string{
		0o644:                             "a regular file",
		fs.ModeDir | 0o755:                "a directory",
		fs.ModeNamedPipe:                  "a named pipe",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
		fs.ModeIrregular:                  "a special file",
	} {
		if got := kindOf(mode); got != want {
			t.Errorf("kindOf(%v): got %q; want %q", mode, got, want)
		}
	}
}
