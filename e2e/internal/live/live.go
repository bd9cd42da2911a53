// Package live runs a Yardstick service as its built binary for tests: built from the
// workspace with a known link-time version, started in dev mode on loopback port 0, its HTTP
// address read from its "serving" log line, stopped with SIGTERM when the test ends (started and
// stopped by internal/proc). Testing the binary, not the handlers, is the point: these tests see
// what a client sees.
package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// Version is the link-time version of the binaries these tests build.
const Version = "v0.0.0-e2e"

// Service is a running service binary.
type Service struct {
	Base string // http://127.0.0.1:port
	GRPC string // 127.0.0.1:port
	out  *proc.LogBuffer
}

// Output is what the binary has logged so far, for failure messages.
func (s *Service) Output() string { return s.out.String() }

// Start builds service ("scoring" or "forecast") and runs it until the test ends.
func Start(t testing.TB, service string) *Service {
	t.Helper()
	return StartWith(t, service)
}

// StartWith is Start with settings of the test's own (YARDSTICK_CORS_ORIGINS=…) after the
// defaults, which they override.
func StartWith(t testing.TB, service string, settings ...string) *Service {
	t.Helper()
	bin, err := build(service)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0",
		"YARDSTICK_LOG_FORMAT=json", "YARDSTICK_SHUTDOWN_GRACE=5s"}
	env = append(env, settings...)
	for _, kv := range os.Environ() {
		// The binary rejects unknown YARDSTICK_* settings; the test's own must not leak in.
		if !strings.HasPrefix(kv, "YARDSTICK_") {
			env = append(env, kv)
		}
	}
	out := &proc.LogBuffer{}
	addr := make(chan addrs, 1)
	p, err := proc.Start(bin, nil, proc.Options{Env: env, Output: &lineWatcher{out: out, found: addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(15 * time.Second); err != nil {
			t.Errorf("%s after SIGTERM: %v; output:\n%s", service, err, out)
		}
	})
	select {
	case a := <-addr:
		return &Service{Base: "http://" + a.http, GRPC: a.grpc, out: out}
	case <-p.Exited():
		t.Fatalf("%s exited before serving (%v); output:\n%s", service, p.ExitErr(), out)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not log \"serving\" within 60s; output:\n%s", service, out)
	}
	return nil
}

var (
	buildMu  sync.Mutex
	binaries = map[string]string{}
)

// build compiles a service once per test binary into a temporary directory; the Go build cache
// makes the next test binary's build a link.
func build(service string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := binaries[service]; ok {
		return bin, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "yardstick-e2e-")
	if err != nil {
		return "", fmt.Errorf("temp dir for the %s binary: %w", service, err)
	}
	bin := filepath.Join(dir, service)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"-ldflags", "-X github.com/yardstick-dev/yardstick/pkg/serve.Version="+Version,
		"github.com/yardstick-dev/yardstick/services/"+service+"/cmd/"+service)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", service, err, out)
	}
	binaries[service] = bin
	return bin, nil
}

// repoRoot is the directory of the workspace's go.work: the services build from there.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", fmt.Errorf("these tests build the services from the workspace: run them with go.work (GOWORK=%q)", work)
	}
	return filepath.Dir(work), nil
}

// addrs are the listen addresses a "serving" line reports.
type addrs struct{ http, grpc string }

// lineWatcher copies the log to out and reports the HTTP and gRPC addresses of the "serving" line.
type lineWatcher struct {
	out     *proc.LogBuffer
	found   chan<- addrs
	partial []byte
	done    bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	_, _ = w.out.Write(p)
	if w.done {
		return len(p), nil
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil // the rest of the line comes with a later write
		}
		line := w.partial[:i]
		w.partial = w.partial[i+1:]
		var rec struct {
			Msg  string `json:"msg"`
			HTTP string `json:"http"`
			GRPC string `json:"grpc"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" && rec.HTTP != "" {
			w.found <- addrs{rec.HTTP, rec.GRPC}
			w.done, w.partial = true, nil
			return len(p), nil
		}
	}
}
