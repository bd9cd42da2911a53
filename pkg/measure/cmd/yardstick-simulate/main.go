// Command yardstick-simulate runs seeded simulated students through adaptive sessions (docs/method.md,
// "Adaptive testing") — through pkg/measure, or through a running scoring service's
// POST /api/score/adaptive/next — and prints the mean length, RMSE, bias, mean reported
// uncertainty, 95% coverage and exposure rates, so that a provider can choose stop rules and
// exposure control for its own bank. See pkg/measure/README.md, "Adaptive testing".
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
		fmt.Fprintf(os.Stderr, "yardstick-simulate: %v\n%s", err, usage)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "yardstick-simulate: %v\n", err)
		os.Exit(1)
	}
}
