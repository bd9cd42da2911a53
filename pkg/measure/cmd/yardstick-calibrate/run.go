package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

const usage = `usage:
  yardstick-calibrate -framework NAME (-anchors BUNDLE_DIR | -mean M)
                      [-model rasch|pcm|rsm] [-strands FILE] [-program NAME] [-out DIR] [-report FILE] RESPONSES.csv
  yardstick-calibrate -new-framework NAME -subject reading|math|none -label TEXT -units-per-logit S -mean M
                      [-success-at-match P] [-display-min A -display-max B] [-negative-prefix TEXT]
                      [-population-sd P] [-growth-sd G] [-strand-spread D] [-extreme-adjust E]
                      [-model …] [-strands FILE] [-program NAME] -out DIR [-report FILE] RESPONSES.csv
  yardstick-calibrate norms [-percentiles LIST] (-out FILE | -bundle DIR) MEASURES.csv
  yardstick-calibrate growth-norms [-min-students N] [-bundle DIR] -out FILE [-report FILE] MEASURES.csv

RESPONSES.csv: header person,<item id>,…; one row per person; cells 1, 0 or empty (not administered),
  or scores 0 … 100 of items in more than two categories (rubrics, rating scales).
  -model               rasch (cells 0/1), pcm (partial credit: item i scored 0 … its highest score) or
                       rsm (rating scale: every item 0 … the file's highest, one step structure);
                       default rasch when every cell is 0/1, else pcm
  -anchors BUNDLE_DIR  the items of the data that this bundle holds fix the scale (mean-mean linking);
                       the new bundle is a copy of it plus the new items
  -mean M              instead: the calibrated items' mean difficulty on the framework scale; the new
                       bundle is the embedded demonstration bundle plus the new items
  -new-framework NAME  a bundle from nothing: this framework (lower case) and the calibrated items
                       only, their mean difficulty at -mean M. Its scale: -label (the unit shown after
                       a value, as L in 775L), -units-per-logit S (> 0), -subject (the forecast paths
                       it serves, reading or math, or none), -success-at-match P (default 0.5: the
                       chance of success when ability equals difficulty), -display-min/-display-max
                       (default M - 5S and M + 5S), -negative-prefix (shown before the size of a
                       value below 0, default "-"), -population-sd (default 5S/3), -growth-sd
                       (default 5S/12), -strand-spread (default 5S/9), -extreme-adjust (default 0.3).
                       Norms, the norm curve and benchmarks come later (norms -bundle)
  -strands FILE        id,strand for every new item (default: one strand named "all")
  -program NAME        the partner program the new items belong to (items.csv's program column:
                       only clients given the program see them); default: shared by every client
  -out DIR             write the new content bundle to DIR (absent or empty)
  -report FILE         write the JSON report to FILE ("-" for stdout)
  -progress DURATION   after this long, print a progress line per iteration on stderr (default 1s)
Nothing is written unless everything succeeds.

norms: a content bundle's norms.csv from a norming sample.
MEASURES.csv: header framework,grade,time_of_year,measure; one row per student measure.
  -percentiles LIST    comma-separated, increasing, within (0, 100) (default 1,5,10,25,50,75,90,95,99)
  -out FILE            the norms file to write ("-" for stdout)
  -bundle DIR          instead: write the norms and the norm curve (grades.csv: each grade's median,
                       made strictly increasing; docs/content.md) of the sample's frameworks into the
                       bundle in DIR, replacing theirs

growth-norms: a content bundle's growth_norms.csv (growth percentiles) from a cohort's measures.
MEASURES.csv: header framework,student,grade,time_of_year,measure; one row per student and window.
  Per framework, for the windows present in time order, a model from each window to the next and
  from each two consecutive windows to the next, fitted from the students with all its windows.
  -min-students N      fit a model only from at least N students (default 300); others are reported
  -bundle DIR          the bundle whose frameworks the measures may name (default: the demo bundle's)
  -out FILE            the growth norms file to write ("-" for stdout)
  -report FILE         write the JSON report (knots, boundaries, coefficients, losses) to FILE
`

var errUsage = errors.New("usage")

type options struct {
	framework, anchors, strands, out, report, responses, model string
	program                                                    string
	mean                                                       float64
	hasMean                                                    bool
	progress                                                   time.Duration
	scale                                                      newScale
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("yardstick-calibrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	fs.StringVar(&o.framework, "framework", "", "")
	fs.StringVar(&o.anchors, "anchors", "", "")
	fs.StringVar(&o.strands, "strands", "", "")
	fs.StringVar(&o.out, "out", "", "")
	fs.StringVar(&o.report, "report", "", "")
	fs.Func("program", "", func(s string) error {
		if !measure.ValidProgram(s) {
			return fmt.Errorf("%q must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit", s)
		}
		o.program = s
		return nil
	})
	fs.Func("model", "", func(s string) error {
		if s != measure.ModelRasch && s != measure.ModelPCM && s != measure.ModelRSM {
			return fmt.Errorf("%q; want rasch, pcm or rsm", s)
		}
		o.model = s
		return nil
	})
	fs.DurationVar(&o.progress, "progress", time.Second, "")
	o.scale.flags(fs)
	fs.Func("mean", "", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !measure.Finite(v) {
			return fmt.Errorf("%q is not a number", s)
		}
		o.mean, o.hasMean = v, true
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.scale.name != "" {
		if err := o.scale.check(fs, &o); err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		o.responses = fs.Arg(0)
		return &o, nil
	}
	switch {
	case fs.NArg() != 1:
		return nil, fmt.Errorf("%w: want one response file after the flags, got %d arguments", errUsage, fs.NArg())
	case o.framework == "":
		return nil, fmt.Errorf("%w: -framework is required", errUsage)
	case (o.anchors == "") == !o.hasMean:
		return nil, fmt.Errorf("%w: give exactly one of -anchors and -mean", errUsage)
	case o.out == "" && o.report == "":
		return nil, fmt.Errorf("%w: give -out, -report or both (otherwise nothing would be written)", errUsage)
	}
	o.responses = fs.Arg(0)
	return &o, nil
}

// run calibrates as the flags say. It checks every input before estimating and writes nothing
// unless everything succeeds (the report last, after the bundle has been written and loaded).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "norms" {
		return runNorms(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "growth-norms" {
		return runGrowthNorms(args[1:], stdout, stderr)
	}
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	start := time.Now()
	base, baseFS := measure.Demo(), measure.DemoFiles()
	switch {
	case o.anchors != "":
		if base, err = measure.LoadDir(o.anchors); err != nil {
			return fmt.Errorf("anchor bundle: %w", err)
		}
		baseFS = os.DirFS(o.anchors)
	case o.scale.name != "":
		if baseFS, err = measure.NewFrameworkFiles(o.scale.framework(o.mean)); err != nil {
			return fmt.Errorf("-new-framework: %w", err)
		}
		if base, err = measure.LoadFS(baseFS); err != nil {
			return fmt.Errorf("-new-framework: %w", err)
		}
		o.framework = o.scale.name
	}
	if o.out != "" {
		if err := measure.CheckOutputDir(o.out); err != nil {
			return err
		}
	}
	job := measure.BankJob{Framework: o.framework, Base: base, Anchored: o.anchors != "", Mean: o.mean}
	if job.Responses, err = readFile(o.responses, measure.ReadResponses); err != nil {
		return err
	}
	if o.strands != "" {
		if job.Strands, err = readFile(o.strands, measure.ReadItemStrands); err != nil {
			return err
		}
	}
	job.Options.Model = o.model
	job.Options.Progress = func(p measure.CalibrateProgress) {
		if time.Since(start) >= o.progress {
			fmt.Fprintf(stderr, "yardstick-calibrate: iteration %d, largest change %.2g logits (%s)\n",
				p.Iteration, p.MaxChange, time.Since(start).Round(time.Millisecond))
		}
	}
	rep, items, err := measure.CalibrateBank(ctx, job)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Program = o.program
	}
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	body = append(body, '\n')
	if o.out != "" {
		if err := measure.ExtendBundle(baseFS, items, o.out); err != nil {
			return fmt.Errorf("write bundle %s: %w", o.out, err)
		}
	}
	if err := writeReport(o.report, body, stdout); err != nil {
		return err
	}
	by := ""
	if rep.Model != "" {
		by = " by " + map[string]string{measure.ModelPCM: "the partial credit model", measure.ModelRSM: "the rating scale model"}[rep.Model]
	}
	fmt.Fprintf(stderr, "yardstick-calibrate: %d items calibrated%s (%d new, %d anchors, %d dropped) from %d persons in %d iterations, %s\n",
		len(rep.Items), by, len(items), len(rep.Anchors), len(rep.Dropped), rep.Persons, rep.Iterations, time.Since(start).Round(time.Millisecond))
	return nil
}

func readFile[T any](path string, read func(io.Reader, string) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}

// writeReport writes the report to path ("-": w) through a temporary file and a rename, so that
// a reader never sees half a report; a path that is not a regular file is written directly.
func writeReport(path string, body []byte, w io.Writer) error {
	switch path {
	case "":
		return nil
	case "-":
		_, err := w.Write(body)
		return err
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A device or a named pipe (-report /dev/stdout, /dev/null) is written to, not replaced by
		// a regular file through the rename.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		_, werr := f.Write(body)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	_, werr := tmp.Write(body)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
