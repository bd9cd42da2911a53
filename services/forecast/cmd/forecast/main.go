// Command forecast serves Yardstick's forecasting interface: a student's or a group's future
// measure with the probability of each performance band, over HTTP/JSON and gRPC.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/forecast/internal/forecast"
)

// identity names the service to the frame, with the ports it listens on by default and its own
// settings (docs/operations.md, "Configuration").
var identity = serve.Identity{Name: "forecast", HTTPAddr: ":8081", GRPCAddr: ":9091", Settings: forecast.Settings}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.Main(ctx, identity, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, build); err != nil {
		fmt.Fprintln(os.Stderr, "forecast:", err)
		os.Exit(1)
	}
}

// build loads the content bundle and makes the forecast service on it.
func build(cfg serve.Config, log *slog.Logger) (serve.Service, error) {
	content, err := measure.OpenLive(cfg.ContentDir)
	if err != nil {
		return serve.Service{}, err
	}
	log.Info("content bundle loaded", "source", content.Source(), "hash", content.Version(), "content", content.Bundle().Stats().String())
	for _, o := range content.Bundle().Offers() {
		log.Info("content framework", "hash", content.Version(), "offer", o.String())
	}
	return forecast.New(content, forecast.LimitsOf(cfg), log).Service(), nil
}
