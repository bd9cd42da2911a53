// Command scoring serves Yardstick's scoring interface: a measure from item results, item
// difficulties or an external scale score, over HTTP/JSON and gRPC.
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
	"github.com/yardstick-dev/yardstick/services/scoring/internal/scoring"
)

// identity names the service to the frame, with the ports it listens on by default and its own
// settings (docs/operations.md, "Configuration").
var identity = serve.Identity{Name: "scoring", HTTPAddr: ":8080", GRPCAddr: ":9090", Settings: scoring.Settings}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.Main(ctx, identity, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, build); err != nil {
		fmt.Fprintln(os.Stderr, "scoring:", err)
		os.Exit(1)
	}
}

// build loads the content bundle and makes the scoring service on it.
func build(cfg serve.Config, log *slog.Logger) (serve.Service, error) {
	content, err := measure.OpenLive(cfg.ContentDir)
	if err != nil {
		return serve.Service{}, err
	}
	log.Info("content bundle loaded", "source", content.Source(), "hash", content.Version(), "content", content.Bundle().Stats().String())
	for _, o := range content.Bundle().Offers() {
		log.Info("content framework", "hash", content.Version(), "offer", o.String())
	}
	// Page tokens are signed with keys derived from the token signing keys, which every replica
	// shares; in dev mode without a keys dir they are random for the process.
	pages, err := scoring.NewPageKeys(cfg.KeysDir)
	if err != nil {
		return serve.Service{}, err
	}
	return scoring.New(content, scoring.LimitsOf(cfg), log).WithPageKeys(pages).Service(), nil
}
