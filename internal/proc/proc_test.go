package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain makes the test binary its own server: with PROC_TEST_ROLE set it plays that role
// instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("PROC_TEST_ROLE") {
	case "":
		os.Exit(m.Run())
	case "server": // listens on PROC_TEST_ADDR, exits 0 on SIGTERM
		l, err := net.Listen("tcp", os.Getenv("PROC_TEST_ADDR"))
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		defer l.Close()
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println("listening")
		<-term
		os.Exit(0)
	case "crash":
		fmt.Println("no config")
		os.Exit(4)
	case "stubborn": // ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
	}
}

func dialable(addr string) func(context.Context) error {
	return func(context.Context) error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
}

func TestStartWaitStop(t *testing.T) {
	t.Parallel()
	addr, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	p, err := Start(os.Args[0], nil, Options{Env: []string{"PROC_TEST_ROLE=server", "PROC_TEST_ADDR=" + addr}, Output: out}) // one writer for both: exec copies them through one pipe
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, 10*time.Millisecond, dialable(addr)); err != nil {
		t.Fatalf("got %v; want ready", err)
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop: got %v; want a clean exit on SIGTERM", err)
	}
	if got := out.String(); got != "listening\n" {
		t.Errorf("output: got %q; want the server's line", got)
	}
	if err := p.Stop(time.Millisecond); err != nil {
		t.Errorf("second Stop: got %v; want the first one's answer", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited not closed after Stop")
	}
}

func TestWaitReadyExited(t *testing.T) {
	t.Parallel()
	p, err := Start(os.Args[0], nil, Options{Env: []string{"PROC_TEST_ROLE=crash"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	never := func(context.Context) error { return errors.New("not yet") }
	err = p.WaitReady(ctx, 10*time.Millisecond, never)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("got %v; want ErrExited with exit status 4", err)
	}
}

func TestWaitReadyTimeout(t *testing.T) {
	t.Parallel()
	addr, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(os.Args[0], nil, Options{Env: []string{"PROC_TEST_ROLE=server", "PROC_TEST_ADDR=" + addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	never := func(context.Context) error { return errors.New("still warming up") }
	err = p.WaitReady(ctx, 10*time.Millisecond, never)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last: still warming up") {
		t.Errorf("got %v; want the deadline with ready's last answer", err)
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	t.Parallel()
	p, err := Start(os.Args[0], nil, Options{Env: []string{"PROC_TEST_ROLE=stubborn"}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let it ignore SIGTERM before one comes
	start := time.Now()
	err = p.Stop(100 * time.Millisecond)
	if !errors.Is(err, ErrKilled) || err.Error() != "did not stop within 100ms of SIGTERM; killed" {
		t.Errorf("got %v; want killed after the grace", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Stop took %s; want about the 100ms grace", took)
	}
}

func TestStartMissingBinary(t *testing.T) {
	t.Parallel()
	if _, err := Start("/nonexistent/server", nil, Options{}); err == nil || !strings.HasPrefix(err.Error(), "start /nonexistent/server: ") {
		t.Errorf("got %v; want the start refused, naming the binary", err)
	}
}

func TestFreePorts(t *testing.T) {
	t.Parallel()
	addrs, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	low := ephemeralLow()
	for _, a := range addrs {
		if seen[a] {
			t.Errorf("%s twice in %v; want distinct ports", a, addrs)
		}
		seen[a] = true
		_, port, _ := net.SplitHostPort(a)
		var n int
		fmt.Sscan(port, &n)
		if n < lowestPort || n >= low {
			t.Errorf("port %d; want in [%d, %d): below the ephemeral range", n, lowestPort, low)
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("listen on %s: %v; want it free", a, err)
			continue
		}
		l.Close()
	}
	if len(addrs) != 5 {
		t.Errorf("got %d addresses; want 5", len(addrs))
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	if lowestPort != 10000 {
		t.Errorf("got lowestPort %d; want 10000", lowestPort)
	}
}
