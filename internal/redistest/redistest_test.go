package redistest

import (
	"net"
	"strings"
	"testing"
)

// TestStartStopRestart: the server answers PING once started, its port is closed once stopped,
// and it answers again on the same port once restarted.
func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("after Start: %v", err)
	}
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/0") {
		t.Errorf("URL %q; want redis://127.0.0.1:PORT/0", s.URL())
	}
	addr := s.Addr()
	s.Stop()
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Fatal("after Stop: the port still answers")
	}
	s.Stop() // a second Stop does nothing
	s.Restart()
	if s.Addr() != addr {
		t.Errorf("restarted on %s; want the same port %s", s.Addr(), addr)
	}
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}
