package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

const usage = `usage:
  yardstick-simulate [-framework NAME] [-bundle DIR] [-students N] [-seed S]
                     [-mean M] [-sd SD] [-random] [-target-success P] [-randomesque K]
                     [-strands NAME=SHARE,...] [-max-items N] [-min-items N]
                     [-target-uncertainty U] [-cut C] [-confidence C] [-exposure N]
                     [-url URL -token TOKEN]

  -framework NAME          the bank to draw from (default: the bundle's first framework by name)
  -bundle DIR              a content bundle directory (default: the embedded demonstration bundle)
  -students N              simulated students (default 2000)
  -seed S                  seed of the abilities, the answers and the randomesque choices (default 1)
  -mean M, -sd SD          true abilities ~ Normal(M, SD²) (default: the bank's median difficulty
                           and the framework's population SD)
  -random                  choose items at random instead of by the rule (the reference)
  -target-success P        choose the item with P(correct) nearest P instead of maximum information
  -randomesque K           choose among the K best (each student gets its own seed)
  -strands NAME=SHARE,...  content balancing: strand target shares
  -max-items, -min-items, -target-uncertainty, -cut, -confidence
                           the stop rules (defaults 30, min(5, max-items), none, none, 0.95)
  -exposure N              list the N most exposed items (default 5)
  -url URL                 send every step to this scoring service (its /api/score/adaptive/next)
                           instead of computing it here; the bundle must be the service's
  -token TOKEN             the bearer token for -url (default: $YARDSTICK_TOKEN), with score:adaptive
`

var errUsage = errors.New("usage")

type options struct {
	framework, bundle, strands, url, token string
	students, exposure                     int
	seed                                   uint64
	random                                 bool
	mean, sd                               *float64
	sim                                    measure.AdaptiveRequest
}

// optional registers a flag that sets *dst only when it is given.
func optional[T any](fs *flag.FlagSet, name string, dst **T, parse func(string) (T, error)) {
	fs.Func(name, "", func(s string) error {
		v, err := parse(s)
		if err != nil {
			return err
		}
		*dst = &v
		return nil
	})
}

func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !measure.Finite(v) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func whole(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("yardstick-simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := options{}
	fs.StringVar(&o.framework, "framework", "", "")
	fs.StringVar(&o.bundle, "bundle", "", "")
	fs.IntVar(&o.students, "students", 2000, "")
	fs.Uint64Var(&o.seed, "seed", 1, "")
	fs.BoolVar(&o.random, "random", false, "")
	fs.StringVar(&o.strands, "strands", "", "")
	fs.IntVar(&o.exposure, "exposure", 5, "")
	fs.StringVar(&o.url, "url", "", "")
	fs.StringVar(&o.token, "token", os.Getenv("YARDSTICK_TOKEN"), "")
	optional(fs, "mean", &o.mean, number)
	optional(fs, "sd", &o.sd, number)
	optional(fs, "target-success", &o.sim.TargetSuccess, number)
	optional(fs, "randomesque", &o.sim.Randomesque, whole)
	optional(fs, "max-items", &o.sim.Stop.MaxItems, whole)
	optional(fs, "min-items", &o.sim.Stop.MinItems, whole)
	optional(fs, "target-uncertainty", &o.sim.Stop.TargetUncertainty, number)
	optional(fs, "cut", &o.sim.Stop.Cut, number)
	optional(fs, "confidence", &o.sim.Stop.Confidence, number)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() != 0:
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	case o.students < 1:
		return nil, fmt.Errorf("%w: -students must be 1 or more, got %d", errUsage, o.students)
	case o.sd != nil && *o.sd < 0:
		return nil, fmt.Errorf("%w: -sd must be 0 or more, got %v", errUsage, *o.sd)
	case o.exposure < 0:
		return nil, fmt.Errorf("%w: -exposure must be 0 or more, got %d", errUsage, o.exposure)
	case o.url != "" && o.token == "":
		return nil, fmt.Errorf("%w: -url needs -token (or $YARDSTICK_TOKEN)", errUsage)
	}
	if o.strands != "" {
		o.sim.Strands = map[string]float64{}
		for _, part := range strings.Split(o.strands, ",") {
			name, share, ok := strings.Cut(part, "=")
			v, err := number(strings.TrimSpace(share))
			if !ok || err != nil {
				return nil, fmt.Errorf("%w: -strands: %q is not NAME=SHARE", errUsage, part)
			}
			o.sim.Strands[strings.TrimSpace(name)] = v
		}
	}
	return &o, nil
}

// run simulates as the flags say and prints the report on stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	b := measure.Demo()
	if o.bundle != "" {
		if b, err = measure.LoadDir(o.bundle); err != nil {
			return err
		}
	}
	if o.framework == "" {
		o.framework = b.FrameworkNames()[0] // a bundle has at least one framework
	}
	bk, ok := b.Bank(strings.ToLower(o.framework))
	if !ok {
		return fmt.Errorf("%w: the content bundle has no %q items", errUsage, o.framework)
	}
	// The settings are checked once here, so a mistake is one clear message, not one per student.
	var problems []string
	bk.Check(&o.sim, func(field, format string, args ...any) {
		problems = append(problems, field+": "+fmt.Sprintf(format, args...))
	})
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", errUsage, strings.Join(problems, "; "))
	}
	pop := measure.Normal{Mean: bk.Median(), SD: bk.Framework().PopulationSD}
	if o.mean != nil {
		pop.Mean = *o.mean
	}
	if o.sd != nil {
		pop.SD = *o.sd
	}
	var next measure.NextFunc
	where := "pkg/measure"
	if o.url != "" {
		next = remote(&http.Client{Timeout: 30 * time.Second}, o.url, o.token, bk)
		where = o.url
	}
	start := time.Now()
	rep, err := bk.Simulate(ctx, measure.Simulation{Students: o.students, Seed: o.seed, Population: pop, Settings: o.sim, Random: o.random}, next)
	if err != nil {
		return err
	}
	rule := "maximum information"
	switch {
	case o.random:
		rule = "random selection"
	case o.sim.TargetSuccess != nil:
		rule = fmt.Sprintf("success rate nearest %v", *o.sim.TargetSuccess)
	}
	if o.sim.Randomesque != nil && *o.sim.Randomesque > 1 && !o.random {
		rule += fmt.Sprintf(", randomesque %d", *o.sim.Randomesque)
	}
	fmt.Fprintf(stdout, "%d students ~ N(%.4g, %.4g²), %s bank of %d items, %s, seed %d, through %s\n",
		rep.Students, pop.Mean, pop.SD, bk.Framework().Name, bk.Len(), rule, o.seed, where)
	fmt.Fprintf(stdout, "mean length       %.2f items\n", rep.MeanLength)
	fmt.Fprintf(stdout, "RMSE              %.2f\n", rep.RMSE)
	fmt.Fprintf(stdout, "bias              %+.2f\n", rep.Bias)
	fmt.Fprintf(stdout, "mean uncertainty  %.2f (%.3f of the RMSE)\n", rep.MeanSD, rep.MeanSD/rep.RMSE)
	fmt.Fprintf(stdout, "95%% coverage      %.4f\n", rep.Coverage)
	fmt.Fprintf(stdout, "items used        %d of %d\n", len(rep.Exposure), bk.Len())
	fmt.Fprintf(stdout, "max exposure      %.4f\n", rep.MaxExposure)
	fmt.Fprintf(stdout, "stop reasons     ")
	for _, r := range sortedKeys(rep.StopReasons) {
		fmt.Fprintf(stdout, " %s %d", r, rep.StopReasons[r])
	}
	fmt.Fprintln(stdout)
	if o.exposure > 0 {
		ids := sortedKeys(rep.Exposure)
		sort.SliceStable(ids, func(i, j int) bool { return rep.Exposure[ids[i]] > rep.Exposure[ids[j]] })
		fmt.Fprintln(stdout, "most exposed      item     rate")
		for _, id := range ids[:min(o.exposure, len(ids))] {
			fmt.Fprintf(stdout, "                  %-8s %.4f\n", id, float64(rep.Exposure[id])/float64(rep.Students))
		}
	}
	fmt.Fprintf(stderr, "yardstick-simulate: %d sessions in %s\n", rep.Students, time.Since(start).Round(time.Millisecond))
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
