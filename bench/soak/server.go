package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
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

// server is the scoring binary under test.
type server struct {
	*proc.Proc
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
	addrs, err := proc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	httpAddr, grpcAddr := addrs[0], addrs[1]
	o := proc.Options{Output: logs} // logs stay on (their cost is part of the measure); nil drops them
	if pin {
		o.Core = "0"
	}
	o.Env = append(os.Environ(), "YARDSTICK_DEV=true", "YARDSTICK_CLIENTS_FILE="+clientsFile,
		"YARDSTICK_HTTP_ADDR="+httpAddr, "YARDSTICK_GRPC_ADDR="+grpcAddr, "YARDSTICK_RELOAD_INTERVAL=0")
	o.Env = append(o.Env, env...)
	p, err := proc.Start(bin, nil, o)
	if err != nil {
		return nil, err
	}
	s := &server{Proc: p, base: "http://" + httpAddr, grpc: grpcAddr}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, 50*time.Millisecond, s.ready); err != nil {
		s.stop()
		return nil, fmt.Errorf("the server did not become ready within 15s: %w", err)
	}
	return s, nil
}

// ready is nil once GET /readyz answers 200.
func (s *server) ready(context.Context) error {
	resp, err := http.Get(s.base + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}

// stop sends SIGTERM and waits (the server drains in well under its grace period).
func (s *server) stop() { _ = s.Stop(10 * time.Second) }
