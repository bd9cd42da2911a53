package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// Main is the body of a service's main: configuration from args and environ, the logger, the
// service build (content loading), then serving until ctx ends. Each service's main is only its
// signal handling and this call. -help writes the usage to stderr and returns nil; -version writes
// "<service> <Version>" to stdout and returns nil.
func Main(ctx context.Context, id Identity, args, environ []string, stdout, stderr io.Writer, build func(Config, *slog.Logger) (Service, error)) error {
	cfg, err := LoadConfig(id, args, environ, stderr)
	if errors.Is(err, ErrHelp) {
		return nil // -help printed the usage: exit 0, as Go commands do
	}
	if errors.Is(err, ErrVersion) {
		_, err = fmt.Fprintln(stdout, id.Name, Version)
		return err
	}
	if err != nil {
		return err
	}
	log, flush, err := telemetry.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = flush() }()
	admission.SetMemoryLimit(log)
	svc, err := build(cfg, log)
	if err != nil {
		return err
	}
	srv, err := New(ctx, cfg, log, svc)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
