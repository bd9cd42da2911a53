// Command forecast serves Yardstick's forecasting interface: a student's or a group's future
// measure with the probability of each performance band, over HTTP/JSON and gRPC.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/forecast/internal/forecast"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "forecast:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg, err := serve.LoadConfig("forecast", args, os.Environ(), os.Stderr)
	if err != nil {
		return err
	}
	log, err := serve.NewLogger(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	content, err := measure.OpenLive(cfg.ContentDir)
	if err != nil {
		return err
	}
	log.Info("content bundle loaded", "source", content.Source(), "content", content.Bundle().Stats().String())
	srv, err := serve.New(ctx, cfg, log, forecast.New(content, cfg.Limits, log).Service())
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
