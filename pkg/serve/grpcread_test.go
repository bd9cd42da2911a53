package serve

import (
	"context"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
)

// retryOf is the RetryInfo delay of err, or 0.
func retryOf(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			return r.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// TestProbe: the probe listener answers Check and List from the main port's health state, even
// while every slot of the main port is held by calls that send nothing; it refuses Watch, messages
// over 1 KiB and more than 4 calls on a connection, and ends a call that sends nothing after 2 s.
func TestProbe(t *testing.T) {
	t.Parallel()
	// The probe's limits: grpcguard's TestTransportLimits.
	probeLis := loopback(t)
	h := startGuard(t, func(s *Server) { s.probeLis = probeLis })
	probe, err := grpc.NewClient(probeLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	check := func(c *grpc.ClientConn, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return healthpb.NewHealthClient(c).Check(ctx, req)
	}
	waitFor(t, "serving", func() bool {
		r, err := check(probe, &healthpb.HealthCheckRequest{})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
	// Hold every slot of the main port.
	for range grpcguard.MaxInfraReads / grpcguard.MaxTokenlessPerConn {
		c := h.dial(t)
		for range grpcguard.MaxTokenlessPerConn {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if _, err := c.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, healthMethod); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Held once a check on the main port, from a connection of its own, is refused for the slots.
	waitFor(t, "the main port's slots held", func() bool {
		_, err := check(h.dial(t), &healthpb.HealthCheckRequest{})
		return status.Code(err) == codes.ResourceExhausted
	})
	for i := range 5 {
		if r, err := check(probe, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("probe %d while the main port's slots are held: got %v, %v; want SERVING", i, r, err)
		}
	}
	if r, err := check(probe, &healthpb.HealthCheckRequest{Service: "yardstick.forecast.v1.ForecastService"}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("probe of the forecast service: got %v, %v; want SERVING", r, err)
	}
	if _, err := check(probe, &healthpb.HealthCheckRequest{Service: string(make([]byte, 1025))}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a probe message over 1 KiB: got %v; want ResourceExhausted", err)
	}
	w, err := healthpb.NewHealthClient(probe).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("Watch on the probe port: got %v; want Unimplemented", err)
	}
	cs, err := probe.NewStream(context.Background(), &grpc.StreamDesc{ClientStreams: true}, healthMethod)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cs.RecvMsg(&healthpb.HealthCheckResponse{}); status.Code(err) != codes.DeadlineExceeded || time.Since(start) > 4*time.Second {
		t.Errorf("a probe that sends nothing: got %v after %s; want DeadlineExceeded after 2 s", err, time.Since(start))
	}
}
