// Package procs starts the built binaries a benchmark measures, pinned to core 0 with taskset
// when it is installed, and reads their CPU time, memory and allocations from /proc and /metrics:
// the part bench-e2e and bench-batch share, on internal/proc's start, wait and stop.
package procs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// Proc is a server under measurement.
type Proc struct {
	*proc.Proc
	bin  string
	http string   // host:port
	out  *os.File // its standard output and error, shown when it fails to start
	tail string   // the end of that output, once stopped
	once sync.Once
}

// Pinned reports whether the servers run pinned to core 0.
func Pinned() bool { return proc.Pinned() }

// Start runs a binary pinned to core 0 and waits until ready says so. Its output goes to a file
// (a pipe would cost the load generator's core): shown if it does not become ready.
func Start(ctx context.Context, bin string, args, env []string, httpAddr string, ready func() bool) (*Proc, error) {
	out, err := os.CreateTemp("", filepath.Base(bin)+"-*.log")
	if err != nil {
		return nil, err
	}
	pp, err := proc.Start(bin, args, proc.Options{Env: append(os.Environ(), env...), Output: out, Core: "0"})
	if err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, err
	}
	p := &Proc{Proc: pp, bin: bin, http: httpAddr, out: out}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = pp.WaitReady(ctx, 50*time.Millisecond, func(context.Context) error {
		if ready() {
			return nil
		}
		return errNotReady
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s: %w; its output ended:\n%s", bin, err, p.tail)
	}
	return p, nil
}

var errNotReady = errors.New("not ready yet")

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
		_ = p.Proc.Stop(10 * time.Second)
		if b, err := os.ReadFile(p.out.Name()); err == nil {
			p.tail = string(b[max(0, len(b)-2048):])
		}
		p.out.Close()
		os.Remove(p.out.Name())
	})
}

// CPUSeconds is the process's user + system CPU time (/proc/PID/stat, clock ticks of 1/100 s).
func (p *Proc) CPUSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
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
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid()))
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
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, p.Pid())
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
