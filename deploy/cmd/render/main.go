// Command render renders kustomizations with the same code the deploy tests use, writes each as
// one YAML file, and fails unless every object decodes strictly and the deployment policy holds
// (make deploy-render) and, with -kube-score, unless kube-score finds nothing (make deploy-score).
// Point it at your own overlay to check it before applying.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	kubeScore := fs.String("kube-score", "", "kube-score binary to run on each rendered overlay (bin/tools/kube-score); none when empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: render [-out dir] [-readme file] [-kube-score bin] kustomization-dir...")
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
		if err := renderOne(dir, *out, *kubeScore, opts); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

func renderOne(dir, out, kubeScore string, opts manifest.Options) error {
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
	checked := "decoded and checked"
	if kubeScore != "" {
		if err := manifest.KubeScore(context.Background(), kubeScore, docs); err != nil {
			return err
		}
		checked += ", kube-score " + strings.Join(manifest.KubeScoreArgs, " ") + ": no CRITICAL or WARNING"
	}
	fmt.Printf("%s: %d objects, %s -> %s\n", dir, len(docs), checked, dest)
	return nil
}
