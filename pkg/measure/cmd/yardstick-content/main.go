// Command yardstick-content is the operator's review of content bundles before they go live:
// check loads a bundle exactly as the services do and prints every problem or a summary per
// framework; diff lists what replacing one bundle by another changes. See docs/content.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  yardstick-content check DIR      load the bundle in DIR as the services would; print every problem
                                   (file:line: reason) or, when valid, a summary per framework (and
                                   per program, when content belongs to programs) and the bundle
                                   hash. Exit 0 valid, 1 invalid, 2 bad usage
  yardstick-content diff OLD NEW   list what replacing bundle OLD by NEW changes: frameworks and
                                   scale parameters, items added, removed, moved to another strand
                                   or program or whose difficulty or steps changed (largest change
                                   first),
                                   strands, forms, links and optional parts. Exit 0 identical,
                                   1 different, 2 bad usage or a bundle that does not load
`

// errUsage is a bad command line (exit 2); errFound is a finding: an invalid bundle, or bundles
// that differ (exit 1).
var (
	errUsage = errors.New("usage")
	errFound = errors.New("found")
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errFound):
		return 1
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "yardstick-content: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "yardstick-content: %v\n", err)
		return 2
	}
}

func run(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 2 && args[0] == "check":
		return check(args[1], stdout)
	case len(args) == 3 && args[0] == "diff":
		return diff(args[1], args[2], stdout)
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "help"):
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("%w: want check DIR or diff OLD NEW, got %q", errUsage, args)
}
