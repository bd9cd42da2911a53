package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// Run listens on the configured addresses and serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	var lis []net.Listener // HTTP, gRPC, and the probe's when it has an address
	for _, a := range []struct{ name, addr string }{{"http", s.cfg.HTTPAddr}, {"grpc", s.cfg.GRPCAddr}, {"probe", s.cfg.ProbeAddr}} {
		if a.addr == "" {
			continue // the probe's alone may be empty (Validate)
		}
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			for _, l := range lis {
				l.Close()
			}
			return fmt.Errorf("listen %s %s: %w", a.name, a.addr, err)
		}
		lis = append(lis, l)
	}
	if len(lis) == 3 {
		s.probeLis = lis[2]
	}
	return s.Serve(ctx, lis[0], lis[1])
}

// Serve serves on the given listeners until ctx ends, then drains (drain.go) before it returns.
func (s *Server) Serve(ctx context.Context, httpLis, grpcLis net.Listener) error {
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	serve := func(name string, f func() error) {
		wg.Go(func() {
			if err := f(); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, grpc.ErrServerStopped) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	serve("grpc", func() error { return s.grpc.Serve(s.guard.Listen(grpcLis)) })
	var probe *grpc.Server
	probeAddr := ""
	if s.probeLis != nil {
		probe, probeAddr = grpcguard.NewProbeServer(s.health), s.probeLis.Addr().String()
		serve("probe", func() error { return probe.Serve(s.probeLis) })
	}
	drainLis := newDrainListener(httpLis)
	serve("http", func() error { return s.http.Serve(drainLis) })

	s.ready.Store(true)
	s.setHealth(healthpb.HealthCheckResponse_SERVING)
	s.log.Info("serving", "service", s.cfg.Service, "version", Version, "http", httpLis.Addr().String(), "grpc", grpcLis.Addr().String(), "probe", probeAddr)

	// The background loops (reload, the sweep of ended calls) stop before the drain.
	background, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	if s.cfg.ReloadInterval > 0 {
		go every(background, s.cfg.ReloadInterval, s.Reload)
	}
	// Calls gRPC ended before any interceptor ran; their duration is measured to the sweep that
	// finds them (at most grpcguard.EndedCallSweep late).
	go every(background, grpcguard.EndedCallSweep, s.guard.LogEndedCalls)

	var runErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down: draining in-flight requests", "delay", s.cfg.ShutdownDelay.String(), "grace", s.cfg.ShutdownGrace.String())
	case runErr = <-errc:
		s.log.Error("server failed; shutting down", "error", runErr)
	}
	stopBackground()
	s.shutdown(drainLis)
	if probe != nil {
		probe.Stop() // probes saw NOT_SERVING through the drain
	}
	wg.Wait()
	s.guard.LogEndedCalls() // the last calls gRPC ended early, before the sweep found them
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.tracing.Shutdown(flushCtx); err != nil {
		s.log.Warn("tracing: spans not exported at shutdown", "error", err)
	}
	return runErr
}

// setHealth sets the overall status ("") and each served service's, so a client may ask about
// either.
func (s *Server) setHealth(st healthpb.HealthCheckResponse_ServingStatus) {
	s.health.SetServingStatus("", st)
	for name := range s.grpc.GetServiceInfo() {
		if !routes.IsPublicService(name) {
			s.health.SetServingStatus(name, st)
		}
	}
}

func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
