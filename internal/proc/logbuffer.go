package proc

import (
	"bytes"
	"sync"
)

// LogBuffer collects what several goroutines write, for a reader that looks while they write: a
// process's two output streams, or the slog lines of the code a test runs.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
