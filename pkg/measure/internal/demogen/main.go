// Command demogen writes the SYNTHETIC demonstration content bundle that pkg/measure embeds
// (run by `go generate ./pkg/measure`). See package democontent for what it contains; its growth
// norms are fitted here, by the fit of yardstick-calibrate growth-norms, from democontent's
// simulated cohorts.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
)

func main() {
	out := flag.String("out", "demo", "directory to write the bundle into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "demogen:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := democontent.Write(dir); err != nil {
		return err
	}
	norms, err := measure.DemoGrowthNorms(democontent.GrowthMeasures())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "growth_norms.csv"), norms, 0o644)
}
