// Command gen writes the OpenAPI 3.0 document of each service (proto/openapi/<service>.openapi.json)
// from the Swagger 2.0 files protoc-gen-openapiv2 generated and the checked-in overlay. `make
// generate` runs it after buf; it fails, writing nothing, when the overlay names a schema,
// property or path that no longer exists or the result is not valid OpenAPI 3.0.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/yardstick-dev/yardstick/proto/openapi/internal/overlay"
)

func main() {
	dir := flag.String("dir", "proto/openapi", "directory holding yardstick/*/v1/*.swagger.json and overlay.yaml; documents are written there")
	services := flag.String("services", "scoring,forecast", "services to write a document for")
	flag.Parse()
	if err := run(*dir, strings.Split(*services, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "openapi gen:", err)
		os.Exit(1)
	}
}

func run(dir string, services []string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "overlay.yaml"))
	if err != nil {
		return fmt.Errorf("read overlay: %w", err)
	}
	o, err := overlay.Parse(raw)
	if err != nil {
		return err
	}
	// The committed documents say "dev"; the server puts its build's version in at run time.
	docs, err := overlay.Build(os.DirFS(dir), o, services, "dev")
	if err != nil {
		return err
	}
	for _, svc := range services {
		if err := os.WriteFile(filepath.Join(dir, svc+".openapi.json"), docs[svc], 0o644); err != nil {
			return fmt.Errorf("write %s document: %w", svc, err)
		}
	}
	return nil
}
