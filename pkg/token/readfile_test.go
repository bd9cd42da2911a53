package token

import (
	"os"
	"path/filepath"
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

// TestReadCappedMessages: internal/safefile's refusals (its own tests cover every kind of file)
// reach the caller with the path in front (the os package's errors name it already).
func TestReadCappedMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		read func() error
		want string
	}{
		{"named pipe", func() error { _, err := readCapped(fifo, 100); return err }, fifo + ": " + "is a named pipe, not a regular file"},
		{"one byte over", func() error { _, err := readCapped(regular, 9); return err }, regular + ": " + "larger than 9 bytes"},
		{"a file as a dir", func() error { _, err := readDir(regular); return err }, regular + ": " + "is a regular file, not a directory"},
		{"missing", func() error { _, err := readCapped(filepath.Join(dir, "none"), 9); return err }, "open " + filepath.Join(dir, "none") + ": no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tc.read(); err == nil || err.Error() != tc.want {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
	if data, err := readCapped(regular, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("at the limit: got %q, %v; want the file", data, err)
	}
}

// TestReadDefaults pins the documented bound.
func TestReadDefaults(t *testing.T) {
	t.Parallel()
	if fileReadTimeout != 5*time.Second {
		t.Errorf("got fileReadTimeout %s; want 5s", fileReadTimeout)
	}
}
