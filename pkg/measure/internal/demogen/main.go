// Command demogen writes the SYNTHETIC demonstration content bundle that pkg/measure embeds
// (run by `go generate ./pkg/measure`). See package democontent for what it contains.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
)

func main() {
	out := flag.String("out", "demo", "directory to write the bundle into")
	flag.Parse()
	if err := democontent.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "demogen:", err)
		os.Exit(1)
	}
}
