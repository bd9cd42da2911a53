// Package procs starts the built binaries a benchmark measures, pinned to core 0 with taskset
// when it is installed, and reads their CPU time, memory and allocations from /proc and /metrics:
// the part bench-e2e and bench-batch share.
package procs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a server under measurement.
type Proc struct {
	cmd    *exec.Cmd
	http   string // host:port
	grpc   string
	out    *os.File      // its standard output and error, shown when it fails to start
	tail   string        // the end of that output, once stopped
	exited chan struct{} // closed when the process has ended
	once   sync.Once
}

func Pinned() bool { _, err := exec.LookPath("taskset"); return err == nil }

// FreePort asks the kernel for a free loopback port.
func FreePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start runs a binary pinned to core 0 and waits until ready says so. Its output goes to a file
// (a pipe would cost the load generator's core): shown if it does not become ready.
func Start(ctx context.Context, bin string, args, env []string, httpAddr string, ready func() bool) (*Proc, error) {
	name, argv := bin, args
	if Pinned() {
		name, argv = "taskset", append([]string{"-c", "0", bin}, args...)
	}
	out, err := os.CreateTemp("", filepath.Base(bin)+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the bench
	if err := cmd.Start(); err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Proc{cmd: cmd, http: httpAddr, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	deadline := time.After(30 * time.Second)
	for !ready() {
		select {
		case <-p.exited:
			p.Stop()
			return nil, fmt.Errorf("%s exited before it was ready (%s); its output ended:\n%s", bin, cmd.ProcessState, p.tail)
		case <-deadline:
			p.Stop()
			return nil, fmt.Errorf("%s did not become ready within 30 s; its output ended:\n%s", bin, p.tail)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return p, nil
}

// HTTPReady is ready when GET url answers below 500.
func HTTPReady(url string) func() bool {
	return func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode < 500
	}
}

// DialReady is ready when addr takes a TCP connection.
func DialReady(addr string) func() bool {
	return func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s) and keeps the end of its output; once.
func (p *Proc) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if b, err := os.ReadFile(p.out.Name()); err == nil {
			p.tail = string(b[max(0, len(b)-2048):])
		}
		p.out.Close()
		os.Remove(p.out.Name())
	})
}

// CPUSeconds is the process's user + system CPU time (/proc/PID/stat, clock ticks of 1/100 s).
func (p *Proc) CPUSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; fields are counted after its closing parenthesis.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat: %s", b)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil
}

// Memory is a /proc/PID/status figure (VmRSS, VmHWM) in bytes. taskset execs the binary, so the
// pid is the server's own.
func (p *Proc) Memory(field string) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, p.cmd.Process.Pid)
}

// Mallocs reads the Go runtime's cumulative allocation count from the service's /metrics.
func (p *Proc) Mallocs() (float64, error) {
	resp, err := http.Get("http://" + p.http + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "go_memstats_mallocs_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("go_memstats_mallocs_total not in /metrics")
}
