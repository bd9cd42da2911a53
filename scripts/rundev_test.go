package scripts

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildOnce builds bin/scoring and bin/forecast before the subtests run `make -o build run`, so
// parallel runs never rewrite the binaries under each other.
func buildOnce(t *testing.T) {
	t.Helper()
	cmd := exec.Command("make", "-s", "build")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
}

// startRun starts `make run` on free ports with a marker, in its own process group, and waits
// for its "running" banner. It returns the command, the four addresses and the output file.
func startRun(t *testing.T, mark string) (*exec.Cmd, []string, string) {
	t.Helper()
	addrs := freePorts(t, 4)
	out := filepath.Join(t.TempDir(), "run.out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := exec.Command("make", "-s", "-o", "build", "run")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), mark,
		"SCORING_HTTP="+addrs[0], "SCORING_GRPC="+addrs[1], "FORECAST_HTTP="+addrs[2], "FORECAST_GRPC="+addrs[3])
	cmd.Stdout, cmd.Stderr = f, f // files, not pipes: Wait must not wait for leftovers' output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // should the test fail half-way, leave nothing behind either
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range marked(mark) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
	waitFor(t, cmd.Process.Pid, out, "Yardstick is running", 60*time.Second)
	return cmd, addrs, out
}

// TestRunDevLeavesNothing: however `make run` is stopped, within 2 s no process it started is
// left and its four ports are free; a stop that was asked for says so in one line and nothing
// else (no "make: ***" line, nothing "unexpectedly"), a service that stops unasked is named.
func TestRunDevLeavesNothing(t *testing.T) {
	t.Parallel()
	buildOnce(t)
	const asked = "make: ***"
	for _, tc := range []struct {
		name  string
		stop  func(t *testing.T, make *exec.Cmd, mark string)
		says  string   // a line of the output, or "" when the script has no chance to speak
		never []string // what the output must not hold
		ended string   // how make ended: its os.ProcessState
	}{
		{"kill -9 of make", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := make.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}, "run-dev: SIGTERM: stopping both services\n", []string{"unexpectedly"}, "signal: killed"},
		{"kill -9 of run-dev.sh", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := syscall.Kill(find(t, mark, "scoring").ppid, syscall.SIGKILL); err != nil {
				t.Fatal(err) // run-dev.sh is the services' parent
			}
		}, "", []string{"unexpectedly"}, "exit status 2"},
		{"Ctrl-C (SIGINT to the process group)", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := syscall.Kill(-make.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}, "run-dev: Ctrl-C: stopping both services\n", []string{asked, "unexpectedly", "SIGTERM"}, "signal: interrupt"},
		{"SIGTERM to make", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := make.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}, "run-dev: SIGTERM: stopping both services\n", []string{asked, "unexpectedly"}, "signal: terminated"},
		// GNU make passes SIGINT on to no child (a terminal signals the whole group) and waits for
		// its children: before the watchdog's handler test, everything ran on for good.
		{"SIGINT to make alone", func(t *testing.T, make *exec.Cmd, mark string) {
			if !catches(make.Process.Pid, syscall.SIGINT) {
				t.Fatal("make does not catch SIGINT: the test was started with SIGINT ignored (in the background?); run it in the foreground")
			}
			if err := make.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}, "run-dev: SIGTERM: stopping both services\n", []string{asked, "unexpectedly"}, "signal: interrupt"},
		{"a service killed (kill -9 of forecast)", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := syscall.Kill(find(t, mark, "forecast").pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}, "run-dev: forecast stopped unexpectedly (exit status 137; its log above says why); stopping scoring\n",
			[]string{"stopping both"}, "exit status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := marker(t)
			cmd, addrs, out := startRun(t, mark)
			// Running means: both services alive, holding the ports, answering.
			var comms []string
			for _, p := range marked(mark) {
				comms = append(comms, p.comm)
			}
			if got := strings.Join(comms, " "); !strings.Contains(got, "scoring") || !strings.Contains(got, "forecast") {
				t.Fatalf("got processes %q; want scoring and forecast running", got)
			}
			for _, a := range []string{addrs[0], addrs[2]} {
				resp, err := http.Get("http://" + a + "/readyz")
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s/readyz: %v %v; want 200", a, resp, err)
				}
				resp.Body.Close()
			}
			tc.stop(t, cmd, mark)
			took := gone(t, mark, addrs, 2*time.Second)
			t.Logf("nothing left after %s", took.Round(time.Millisecond))
			_ = cmd.Wait()
			if got := cmd.ProcessState.String(); got != tc.ended {
				t.Errorf("make ended with %q; want %q", got, tc.ended)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			_, after, _ := strings.Cut(string(b), "Ctrl-C stops both.\n")
			if !strings.Contains(after, tc.says) {
				t.Errorf("output after the banner lacks %q; got:\n%s", tc.says, after)
			}
			if n := strings.Count(after, "run-dev:"); n != min(1, len(tc.says)) {
				t.Errorf("got %d run-dev lines after the banner; want %d:\n%s", n, min(1, len(tc.says)), after)
			}
			for _, w := range tc.never {
				if strings.Contains(after, w) {
					t.Errorf("output after the banner holds %q; got:\n%s", w, after)
				}
			}
		})
	}
}

// find returns the process named comm among those carrying mark, or fails the test.
func find(t *testing.T, mark, comm string) proc {
	t.Helper()
	for _, p := range marked(mark) {
		if p.comm == comm {
			return p
		}
	}
	t.Fatalf("no %s process found", comm)
	return proc{}
}

// catches reports whether process pid has a handler for sig (SigCgt of /proc/pid/status).
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(sig-1)) != 0
		}
	}
	return false
}

// TestRunDevBusyPort: a port taken by another process stops `make run` before it starts anything,
// naming the port and the process that holds it; no "running" banner.
func TestRunDevBusyPort(t *testing.T) {
	t.Parallel()
	buildOnce(t)
	for _, which := range []string{"SCORING_HTTP", "FORECAST_GRPC"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			mark := marker(t)
			addrs := freePorts(t, 4)
			names := []string{"SCORING_HTTP", "SCORING_GRPC", "FORECAST_HTTP", "FORECAST_GRPC"}
			env := append(os.Environ(), mark)
			var held net.Listener
			for i, n := range names {
				if n == which {
					l, err := net.Listen("tcp", addrs[i])
					if err != nil {
						t.Fatal(err)
					}
					defer l.Close()
					held = l
				}
				env = append(env, n+"="+addrs[i])
			}
			cmd := exec.Command("make", "-s", "-o", "build", "run")
			cmd.Dir = root
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("make run succeeded with %s taken; want a failure\n%s", which, out)
			}
			_, port, _ := net.SplitHostPort(held.Addr().String())
			want := fmt.Sprintf("port %s (%s) is in use by pid %d (", port, held.Addr(), os.Getpid())
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q; got:\n%s", want, out)
			}
			if strings.Contains(string(out), "Yardstick is running") {
				t.Errorf("output says running; got:\n%s", out)
			}
			if left := marked(mark); len(left) > 0 {
				t.Errorf("processes left: %v; want none", left)
			}
		})
	}
}
