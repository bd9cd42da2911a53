// Command yardstick-calibrate is the operator tool of pkg/measure's calibration: from a response
// file it estimates Rasch item difficulties (or partial credit or rating scale steps) by
// conditional maximum likelihood, puts them on a framework's scale and writes a content bundle
// with the new items and a JSON report. See pkg/measure/README.md, "Calibration".
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "yardstick-calibrate: %v\n%s", err, usage)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "yardstick-calibrate: %v\n", err)
		os.Exit(1)
	}
}
