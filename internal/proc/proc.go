// Package proc starts a built binary, waits until it is ready and stops it: the one harness the
// benchmarks (bench/internal/procs), the soak runs (bench/soak), the end-to-end tests
// (e2e/internal/live) and the deployment checks (deploy/internal/tie) run a server with, each
// adding only what it measures or checks. FreePorts picks the loopback ports it listens on.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Options say how a binary runs.
type Options struct {
	// Env is the process's whole environment: nothing of the caller's leaks in unless it is here.
	Env []string
	// Dir is its working directory ("" the caller's).
	Dir string
	// Output receives its standard output and error (nil: dropped).
	Output io.Writer
	// Core pins it to this CPU ("0") with taskset when taskset is installed ("": not pinned).
	// taskset execs the binary, so the pid is still the binary's own.
	Core string
}

// Proc is a running binary.
type Proc struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	err      error // its exit, once exited is closed
	stopOnce sync.Once
	stopErr  error
}

// Pinned reports whether taskset is installed, so that Options.Core takes effect.
func Pinned() bool { _, err := exec.LookPath("taskset"); return err == nil }

// Start runs bin with args. The process is killed if the caller's process dies first, so that a
// benchmark or test cut short leaves no server behind.
func Start(bin string, args []string, o Options) (*Proc, error) {
	name, argv := bin, args
	if o.Core != "" && Pinned() {
		name, argv = "taskset", append([]string{"-c", o.Core, bin}, args...)
	}
	cmd := exec.Command(name, argv...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean the caller's environment
	}
	if o.Output != nil {
		cmd.Stdout, cmd.Stderr = o.Output, o.Output
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Proc{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended; ExitErr then says how.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// ExitErr is the process's exit (nil for status 0); valid once Exited is closed.
func (p *Proc) ExitErr() error { return p.err }

// Signal sends the process sig.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// ErrKilled is Stop's error when the process outlived its grace and was killed.
var ErrKilled = errors.New("killed")

// ErrExited is WaitReady's error when the process ended before it was ready.
var ErrExited = errors.New("exited before it was ready")

// WaitReady asks ready every interval until it answers nil, the process exits (ErrExited, with
// its exit) or ctx ends (ctx's error, with ready's last answer).
func (p *Proc) WaitReady(ctx context.Context, every time.Duration, ready func(context.Context) error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		last := ready(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%w (%v)", ErrExited, p.err)
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w; last: %v", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM and waits up to grace for the process to end, then kills it; once (a later
// call answers as the first did). Its error is the process's exit, or that it had to be killed.
func (p *Proc) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited: // ended already: its exit is the answer
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-p.exited:
			p.stopErr = p.err
		case <-timer.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = fmt.Errorf("did not stop within %s of SIGTERM; %w", grace, ErrKilled)
		}
	})
	return p.stopErr
}
