package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// runNorms is the norms subcommand: a norming sample in, a bundle's norms.csv out (through a
// temporary file and a rename, like the report), nothing written on any problem.
func runNorms(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("yardstick-calibrate norms", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "")
	bundle := fs.String("bundle", "", "")
	percentiles := measure.DefaultNormPercentiles
	fs.Func("percentiles", "", func(s string) error {
		percentiles = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !measure.Finite(v) {
				return fmt.Errorf("%q is not a number", f)
			}
			percentiles = append(percentiles, v)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			return nil
		}
		return fmt.Errorf("%w: norms: %v", errUsage, err)
	}
	switch {
	case fs.NArg() != 1:
		return fmt.Errorf("%w: norms: want one measures file after the flags, got %d arguments", errUsage, fs.NArg())
	case (*out == "") == (*bundle == ""):
		return fmt.Errorf("%w: norms: give one of -out and -bundle", errUsage)
	}
	sample, err := readFile(fs.Arg(0), measure.ReadNormSample)
	if err != nil {
		return err
	}
	if *bundle != "" {
		w, err := measure.AddNorms(*bundle, sample, percentiles)
		if err != nil {
			return fmt.Errorf("norms: %w", err)
		}
		fmt.Fprintf(stderr, "yardstick-calibrate: %d norms tables and the norm curves of %s from %d measures written to %s\n",
			w.Tables, strings.Join(w.Frameworks, ", "), len(sample), *bundle)
		return nil
	}
	tables, err := measure.BuildNorms(sample, percentiles)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	comment := fmt.Sprintf("norms from %d measures (yardstick-calibrate norms)", len(sample))
	if err := measure.WriteNorms(&buf, tables, comment); err != nil {
		return err
	}
	if err := writeReport(*out, buf.Bytes(), stdout); err != nil {
		return fmt.Errorf("norms: %w", err)
	}
	fmt.Fprintf(stderr, "yardstick-calibrate: %d norms tables from %d measures\n", len(tables), len(sample))
	return nil
}
