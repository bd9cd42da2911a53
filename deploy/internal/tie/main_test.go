package tie

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/yardstick-dev/yardstick/deploy/internal/dockerfile"
)

// repoRoot is the repository root seen from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// binaries maps each service to its binary, built once for the package by replaying the
// Dockerfile's build stage: the binaries under test are built by the image's own build line.
var binaries = map[string]string{}

// buildVersion is the VERSION build argument of the test binaries.
const buildVersion = "v0.0.0-tie-check"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tie-binaries-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "build the service binaries as the Dockerfile does:", err)
		return 1
	}
	return m.Run()
}

func buildBinaries(dir string) error {
	f, err := dockerfile.ParseFile(filepath.Join(repoRoot, "deploy", "Dockerfile"))
	if err != nil {
		return err
	}
	for _, svc := range []string{"scoring", "forecast"} {
		var log bytes.Buffer
		args := map[string]string{"SERVICE": svc, "VERSION": buildVersion, "OUT_DIR": dir}
		if err := f.Replay(context.Background(), "build", repoRoot, args, &log); err != nil {
			return fmt.Errorf("%w\n%s", err, log.String())
		}
		binaries[svc] = filepath.Join(dir, svc)
	}
	return nil
}
