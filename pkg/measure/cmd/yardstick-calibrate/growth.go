package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// runGrowthNorms is the growth-norms subcommand: a cohort's longitudinal measures in, a bundle's
// growth_norms.csv and a JSON report out (each through a temporary file and a rename), nothing
// written on any problem.
func runGrowthNorms(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("yardstick-calibrate growth-norms", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "")
	report := fs.String("report", "", "")
	bundle := fs.String("bundle", "", "")
	minStudents := fs.Int("min-students", 300, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			return nil
		}
		return fmt.Errorf("%w: growth-norms: %v", errUsage, err)
	}
	switch {
	case fs.NArg() != 1:
		return fmt.Errorf("%w: growth-norms: want one measures file after the flags, got %d arguments", errUsage, fs.NArg())
	case *out == "":
		return fmt.Errorf("%w: growth-norms: -out is required", errUsage)
	case *minStudents < 1:
		return fmt.Errorf("%w: growth-norms: -min-students %d; want at least 1", errUsage, *minStudents)
	}
	base := measure.Demo()
	if *bundle != "" {
		var err error
		if base, err = measure.LoadDir(*bundle); err != nil {
			return fmt.Errorf("growth-norms: %w", err)
		}
	}
	frameworks := base.Stats().Frameworks
	measures, err := readFile(fs.Arg(0), func(r io.Reader, name string) ([]measure.GrowthMeasure, error) {
		return measure.ReadGrowthMeasures(r, name, frameworks)
	})
	if err != nil {
		return err
	}
	start := time.Now()
	var modelStart time.Time
	progress := func(model string, n, done int) {
		switch done {
		case 0:
			modelStart = time.Now()
			fmt.Fprintf(stderr, "yardstick-calibrate: fitting %s: %d students, %d quantiles\n", model, n, measure.GrowthQuantiles)
		case measure.GrowthQuantiles:
			fmt.Fprintf(stderr, "yardstick-calibrate: fitted %s in %s\n", model, time.Since(modelStart).Round(time.Millisecond))
		}
	}
	rep, models, err := measure.BuildGrowthNorms(measures, *minStudents, progress)
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	body = append(body, '\n')
	comment := fmt.Sprintf("growth norms from %d measures (yardstick-calibrate growth-norms, at least %d students a model)", len(measures), *minStudents)
	if err := writeReport(*out, measure.WriteGrowthNorms(models, comment), stdout); err != nil {
		return fmt.Errorf("growth-norms: %w", err)
	}
	if err := writeReport(*report, body, stdout); err != nil {
		return fmt.Errorf("growth-norms: %w", err)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(stderr, "yardstick-calibrate: skipped %s grade %d %s from %v: %s\n", s.Framework, s.Current.Grade, s.Current.TimeOfYear, s.Priors, s.Reason)
	}
	fmt.Fprintf(stderr, "yardstick-calibrate: %d growth models fitted, %d skipped, from %d measures in %s\n",
		len(models), len(rep.Skipped), len(measures), time.Since(start).Round(time.Millisecond))
	return nil
}
