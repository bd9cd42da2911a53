// Command render renders kustomizations with the same code the deploy tests use, writes each as
// one YAML file, and fails unless every object decodes strictly and the deployment policy holds
// (make deploy-render). Point it at your own overlay to check it before applying.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	out := fs.String("out", "deploy/.rendered", "directory for <overlay>.yaml files")
	readme := fs.String("readme", "deploy/README.md", "README whose kubectl create commands name the objects the operator creates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: render [-out dir] [-readme file] kustomization-dir...")
	}
	doc, err := os.ReadFile(*readme)
	if err != nil {
		return fmt.Errorf("read the operator's commands: %w", err)
	}
	opts := manifest.Options{External: manifest.OperatorCreated(doc)}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	var errs []error
	for _, dir := range fs.Args() {
		if err := renderOne(dir, *out, opts); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

func renderOne(dir, out string, opts manifest.Options) error {
	docs, err := manifest.Render(dir)
	if err != nil {
		return err
	}
	dest := filepath.Join(out, filepath.Base(filepath.Clean(dir))+".yaml")
	if err := os.WriteFile(dest, bytes.Join(docs, []byte("---\n")), 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	set, err := manifest.Decode(docs)
	if err != nil {
		return err
	}
	if err := manifest.Check(set, opts); err != nil {
		return err
	}
	fmt.Printf("%s: %d objects, decoded and checked -> %s\n", dir, len(docs), dest)
	return nil
}
