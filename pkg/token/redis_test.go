package token

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// redisServer is a real redis-server on a loopback port, started by the test and stopped at
// its cleanup. Persistence is off: a restart comes back empty, as a Redis without storage does.
type redisServer struct {
	t    *testing.T
	path string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startRedis starts redis-server. Without it the test fails under CI=true (.ci/run installs
// it) and is skipped elsewhere.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (apt-get install -y redis-server); CI=true requires the Redis tests to run")
		}
		t.Skip("redis-server is not installed (apt-get install -y redis-server); the Redis tests need it")
	}
	s := &redisServer{t: t, path: path}
	t.Cleanup(s.stop)
	// A port picked free may be taken before redis-server binds it: try another.
	for attempt := 0; ; attempt++ {
		s.port = freePort(t)
		if err = s.start(); err == nil || attempt == 4 {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// freePort picks a free loopback port (internal/proc.FreePorts: below the kernel's ephemeral
// range, so that no parallel test's outgoing connection takes it before redis-server binds it,
// or between a kill and the restart on the same port).
func freePort(t *testing.T) int {
	t.Helper()
	addr, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *redisServer) start() error {
	var out logBuffer
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
	c := s.client()
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, out.String())
		default:
		}
		if c.Ping(context.Background()).Err() == nil {
			return nil
		}
	}
	s.stop()
	return fmt.Errorf("redis-server on port %d did not answer within 10 s: %s", s.port, out.String())
}

// stop kills redis-server at once, as a crashed or partitioned Redis looks to its clients.
func (s *redisServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done // the start goroutine reaps it
	s.cmd = nil
	// Wait until the port no longer answers, so that "killed" means killed for the code under test.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", s.addr(), 100*time.Millisecond)
		if err != nil {
			return
		}
		conn.Close()
	}
}

// restart starts redis-server again on the same port, empty.
func (s *redisServer) restart() {
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

func (s *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }
func (s *redisServer) url() string  { return "redis://" + s.addr() + "/0" }

func (s *redisServer) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
}

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// flush empties the server between parts of a test.
func (s *redisServer) flush(t *testing.T) {
	t.Helper()
	c := s.client()
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
