package scripts

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
// left and its four ports are free.
func TestRunDevLeavesNothing(t *testing.T) {
	t.Parallel()
	buildOnce(t)
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, make *exec.Cmd, mark string)
	}{
		{"kill -9 of make", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := make.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
		{"kill -9 of run-dev.sh", func(t *testing.T, make *exec.Cmd, mark string) {
			// run-dev.sh is the services' parent.
			for _, p := range marked(mark) {
				if p.comm == "scoring" {
					if err := syscall.Kill(p.ppid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
			t.Fatal("no scoring process found")
		}},
		{"Ctrl-C (SIGINT to the process group)", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := syscall.Kill(-make.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}},
		{"SIGTERM to make", func(t *testing.T, make *exec.Cmd, mark string) {
			if err := make.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := marker(t)
			cmd, addrs, _ := startRun(t, mark)
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
		})
	}
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
