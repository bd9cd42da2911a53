package grpcguard

// The probe listener (YARDSTICK_PROBE_ADDR). On the main gRPC port a health check is a call
// without a token, read within a small pool of slots shared across connections (tap.go), which a
// caller that opens calls and sends nothing can hold: one such connection once had 39 of 40
// readiness checks refused. So the kubelet asks a gRPC server of its own, where a caller costs at
// most a few KiB per connection and nothing anyone else needs. It answers from the main port's
// health state, so it turns NOT_SERVING with the drain.

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// A health check request is a service name; the kubelet opens a connection per probe for one call.
const (
	probeMaxMessage  = 1 << 10
	probeMaxStreams  = 4
	probeCallTimeout = 2 * time.Second
)

// NewProbeServer serves the health state hs for probes.
func NewProbeServer(hs healthpb.HealthServer) *grpc.Server {
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(probeMaxMessage),
		grpc.MaxConcurrentStreams(probeMaxStreams),
		grpc.MaxHeaderListSize(8<<10),
		grpc.StaticStreamWindowSize(streamWindowBytes),
		grpc.StaticConnWindowSize(streamWindowBytes),
		grpc.InTapHandle(probeTap),
	)
	healthpb.RegisterHealthServer(srv, hs)
	return srv
}

// probeTap lets Check and List in, each with probeCallTimeout to be answered; Watch, which would
// stay open, is refused.
func probeTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	switch info.FullMethodName {
	case healthpb.Health_Check_FullMethodName, healthpb.Health_List_FullMethodName:
		ctx, cancel := context.WithTimeout(ctx, probeCallTimeout)
		context.AfterFunc(ctx, cancel) // the call's end cancels it; the timer goes with it
		return ctx, nil
	default:
		return nil, status.Error(codes.Unimplemented, "the probe port serves grpc.health.v1 Check and List only")
	}
}
