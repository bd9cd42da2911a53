package telemetry

import (
	"io"
	"testing"
)

func TestNewLogger(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"json", "text"} {
		if _, _, err := NewLogger(io.Discard, f, "debug"); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, _, err := NewLogger(io.Discard, "xml", "info"); err == nil {
		t.Error("xml format: got no error")
	}
	if _, _, err := NewLogger(io.Discard, "json", "loud"); err == nil {
		t.Error("level loud: got no error")
	}
}
