package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// client is a clients-file entry the soak logs in with.
type client struct{ id, secret string }

// clients writes a clients file into dir: good clients (tool-made secrets, the fast hash),
// attacked ones of the same kind, and one argon2id client at the default cost for the
// informational phase. It returns the file's path and the clients by role.
func clients(dir string, good, attacked int) (path string, goods, targets []client, argon client, err error) {
	var b strings.Builder
	b.WriteString("clients:\n")
	add := func(id, hash string) {
		fmt.Fprintf(&b, "  - clientId: %s\n    secretHash: %s\n    services: [scoring]\n    permissions: [\"*\"]\n", id, hash)
	}
	for i := range good + attacked {
		secret, hash, err := token.GenerateSecret()
		if err != nil {
			return "", nil, nil, client{}, err
		}
		c := client{fmt.Sprintf("good-%d", i), secret}
		if i >= good {
			c.id = fmt.Sprintf("attacked-%d", i-good)
			targets = append(targets, c)
		} else {
			goods = append(goods, c)
		}
		add(c.id, hash)
	}
	argon = client{"hand-made", "a secret a person chose"}
	hash, err := token.HashSecret(argon.secret)
	if err != nil {
		return "", nil, nil, client{}, err
	}
	add(argon.id, hash)
	path = filepath.Join(dir, "clients.yaml")
	return path, goods, targets, argon, os.WriteFile(path, []byte(b.String()), 0o600)
}

// freePort asks the kernel for a free loopback port (port 0) and releases it for the server.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// server is the scoring binary under test.
type server struct {
	cmd  *exec.Cmd
	base string
	grpc string // host:port of its gRPC listener
}

// startServer runs bin in dev mode with the clients file on free loopback ports, pinned to CPU 0
// with taskset when pin is set, and waits until it is ready. env adds settings (NAME=value).
func startServer(ctx context.Context, bin, clientsFile string, pin bool, env ...string) (*server, error) {
	return startServerLogging(ctx, bin, clientsFile, pin, nil, env...)
}

// startServerLogging is startServer with the server's standard output and error written to logs
// (nil: dropped).
func startServerLogging(ctx context.Context, bin, clientsFile string, pin bool, logs io.Writer, env ...string) (*server, error) {
	httpAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	grpcAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{bin}
	if pin {
		args = append([]string{"taskset", "-c", "0"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "YARDSTICK_DEV=true", "YARDSTICK_CLIENTS_FILE="+clientsFile,
		"YARDSTICK_HTTP_ADDR="+httpAddr, "YARDSTICK_GRPC_ADDR="+grpcAddr, "YARDSTICK_RELOAD_INTERVAL=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logs, logs // logs stay on (their cost is part of the measure); nil drops them
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{cmd: cmd, base: "http://" + httpAddr, grpc: grpcAddr}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("the server did not become ready within 15s")
}

// stop sends SIGTERM and waits (the server drains in well under its grace period).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
