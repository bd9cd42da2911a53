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

// Main is the body of a service's main, after its signal handling: configuration from args and
// environ, the logger, the service's build, then serving until ctx ends. -help writes the usage to
// stderr, -version "<service> <Version>" to stdout, and both return nil.
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
