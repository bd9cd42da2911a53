// Package redistest runs a real redis-server on a loopback port for a test, the one harness the
// tests of the login throttle (pkg/token) and of the clients' limits (pkg/serve's quota) share:
// started on a free port below the kernel's ephemeral range, ready once it answers PING, killed
// at once on Stop (as a crashed or partitioned Redis looks to its clients) and started again,
// empty, on the same port by Restart. Persistence is off. Standard library only: it speaks the
// one RESP exchange it needs (PING) itself, so importing it adds no Redis client to a module.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// Server is one redis-server run by a test.
type Server struct {
	t    testing.TB
	path string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start starts redis-server and stops it at the test's cleanup. Without redis-server installed
// the test fails under CI=true (.ci/run installs it) and is skipped elsewhere.
func Start(t testing.TB) *Server {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (apt-get install -y redis-server); CI=true requires the Redis tests to run")
		}
		t.Skip("redis-server is not installed (apt-get install -y redis-server); the Redis tests need it")
	}
	s := &Server{t: t, path: path}
	t.Cleanup(s.Stop)
	// A port picked free may be taken before redis-server binds it: try another.
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil || attempt == 4 {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// freePort is a free loopback port below the kernel's ephemeral range (proc.FreePort), so that
// no parallel test's outgoing connection takes it before redis-server binds it, or between a
// kill and the restart on the same port.
func freePort() (int, error) {
	addr, err := proc.FreePort()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's redis:// URL, database 0, as YARDSTICK_REDIS_URL takes it.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	var out proc.LogBuffer
	s.cmd = exec.Command(s.path, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.t.TempDir())
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	s.done = exited
	cmd := s.cmd
	go func() { _ = cmd.Wait(); close(exited) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, out.String())
		default:
		}
		if ping(s.Addr()) == nil {
			return nil
		}
	}
	s.Stop()
	return fmt.Errorf("redis-server on port %d did not answer within 10 s: %s", s.port, out.String())
}

// ping sends RESP's inline PING and wants +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop kills redis-server at once and waits until its port no longer answers, so that "killed"
// means killed for the code under test. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done // the start goroutine reaps it
	s.cmd = nil
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", s.Addr(), 100*time.Millisecond)
		if err != nil {
			return
		}
		conn.Close()
	}
}

// Restart starts redis-server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	var err error
	for range 5 {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatal(err)
}
