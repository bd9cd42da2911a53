// Command imagebuild replays the build stage of deploy/Dockerfile on the host for each service,
// so that the image's exact go build lines are exercised without a Docker engine
// (make image-build-check). Binaries land in -out, one per service.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/yardstick-dev/yardstick/deploy/internal/dockerfile"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	file := fs.String("dockerfile", "deploy/Dockerfile", "the Dockerfile")
	contextDir := fs.String("context", ".", "the build context (the repository root)")
	out := fs.String("out", "bin/image", "directory for the binaries (the build's OUT_DIR)")
	version := fs.String("version", "dev", "VERSION build argument")
	services := fs.String("services", "scoring,forecast", "comma-separated SERVICE build arguments")
	stage := fs.String("stage", "build", "the stage to replay")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	f, err := dockerfile.ParseFile(*file)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(*out)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := os.MkdirAll(absOut, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var errs []error
	for _, svc := range strings.Split(*services, ",") {
		buildArgs := map[string]string{"SERVICE": svc, "VERSION": *version, "OUT_DIR": absOut}
		fmt.Printf("replaying %s stage %q with %v\n", *file, *stage, buildArgs)
		if err := f.Replay(ctx, *stage, *contextDir, buildArgs, os.Stdout); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Stat(filepath.Join(absOut, svc)); err != nil {
			errs = append(errs, fmt.Errorf("%s: the build ran but left no binary: %w", svc, err))
		}
	}
	return errors.Join(errs...)
}
