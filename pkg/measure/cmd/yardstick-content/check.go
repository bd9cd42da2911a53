package main

import (
	"fmt"
	"io"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// check prints every problem of the bundle in dir (errFound), or its summary.
func check(dir string, w io.Writer) error {
	b, problems := measure.CheckDir(dir)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(w, p)
		}
		fmt.Fprintf(w, "%s: %d problems; the services would not load this bundle\n", dir, len(problems))
		return errFound
	}
	live, err := measure.OpenLive(dir)
	if err != nil { // changed between the two reads
		return err
	}
	fmt.Fprintf(w, "%s: valid, hash %s\n", dir, live.Version())
	for _, o := range b.Offers() {
		fmt.Fprintln(w, o)
	}
	return nil
}
