package main

import (
	"context"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
	"github.com/yardstick-dev/yardstick/internal/proc"
)

// service is a service binary started for one stream (a fresh process, so that its VmHWM is the
// stream's), with the demo client's token.
type service struct {
	*procs.Proc
	httpAddr, grpcAddr, tok string
}

// startService starts bin/name ("scoring" or "forecast") in dev mode on free loopback ports,
// waits until it is ready and logs in.
func startService(ctx context.Context, bin, name string) (*service, error) {
	httpAddr, _ := proc.FreePort()
	grpcAddr, _ := proc.FreePort()
	env := []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=" + httpAddr, "YARDSTICK_GRPC_ADDR=" + grpcAddr}
	p, err := procs.Start(ctx, filepath.Join(bin, name), nil, env, httpAddr, procs.HTTPReady("http://"+httpAddr+"/readyz"))
	if err != nil {
		return nil, err
	}
	tok, err := token(httpAddr)
	if err != nil {
		p.Stop()
		return nil, err
	}
	return &service{Proc: p, httpAddr: httpAddr, grpcAddr: grpcAddr, tok: tok}, nil
}

// dial connects to the service's gRPC port; the context carries the token.
func (s *service) dial(ctx context.Context) (*grpc.ClientConn, context.Context, error) {
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return conn, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.tok), nil
}
