package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// TestRunListens: Run listens on each configured address, the probe's only when it has one; an
// address it cannot listen on is named in its error, and the listeners it opened before are
// closed again.
func TestRunListens(t *testing.T) {
	t.Parallel()
	registerThrowaway(t)
	run := func(t *testing.T, cfg Config) (context.CancelFunc, chan error) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		srv, err := New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), newEchoServer().service())
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		return cancel, done
	}
	t.Run("a busy address", func(t *testing.T) {
		t.Parallel()
		busy := loopback(t)
		defer busy.Close()
		free, err := proc.FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(t)
		cfg.HTTPAddr, cfg.GRPCAddr, cfg.ProbeAddr = free[0], busy.Addr().String(), free[1]
		cancel, done := run(t, cfg)
		defer cancel()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "listen grpc "+busy.Addr().String()) {
				t.Fatalf("got %v; want the gRPC address named", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
		for _, addr := range free {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Errorf("%s still held after Run failed: %v", addr, err)
				continue
			}
			l.Close()
		}
	})
	for _, probe := range []bool{true, false} {
		name := map[bool]string{true: "with a probe address", false: "without one"}[probe]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addrs, err := proc.FreePorts(3)
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(t)
			cfg.HTTPAddr, cfg.GRPCAddr = addrs[0], addrs[1]
			if probe {
				cfg.ProbeAddr = addrs[2]
			}
			cancel, done := run(t, cfg)
			for _, addr := range addrs[:2] {
				waitListening(t, addr)
			}
			if r, err := http.Get("http://" + addrs[0] + "/healthz"); err != nil || r.StatusCode != http.StatusOK {
				t.Errorf("GET /healthz: got %v, %v; want 200", r, err)
			} else {
				r.Body.Close()
			}
			conn, err := grpc.NewClient(addrs[2], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, stop := context.WithTimeout(context.Background(), time.Second)
			defer stop()
			_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if probe && err != nil {
				t.Errorf("the probe's Check: %v; want SERVING", err)
			}
			if !probe && err == nil {
				t.Errorf("a probe answered on %s without YARDSTICK_PROBE_ADDR", addrs[2])
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
}

// waitListening waits until addr takes connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}
