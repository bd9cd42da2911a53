package quota

// A copy of pkg/token's redis-server harness (redis_test.go): test code is not importable across
// modules.
import (
	"bytes"
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a real redis-server on a loopback port, started by the test and stopped at
// its cleanup. Persistence is off: a restart comes back empty, as a Redis without storage does.
type redisServer struct {
	t    testing.TB
	path string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startRedis starts redis-server. Without it the test fails under CI=true (.ci/run installs
// it) and is skipped elsewhere.
func startRedis(t testing.TB) *redisServer {
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

// freePort picks a free loopback port below the kernel's ephemeral range: a port 0 picked and
// released could be taken by any parallel test's outgoing connection before redis-server binds
// it, or between a kill and the restart on the same port.
func freePort(t testing.TB) int {
	t.Helper()
	low := 32768 // Linux's default ip_local_port_range starts here
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	const from = 10000
	if low <= from+1000 {
		t.Fatalf("ephemeral ports start at %d: no room below for redis-server", low)
	}
	for range 1000 {
		port := from + mrand.IntN(low-from)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatalf("no free port between %d and %d", from, low)
	return 0
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
