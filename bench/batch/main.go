// Command bench-batch measures the batch and group streams of issue 21 on both fronts, as `make bench-batch` runs it: the
// scoring and forecast services as built binaries pinned to core 0 (dev mode), this load
// generator pinned to core 1, on loopback.
//
//  1. A batch of -records 40-item difficulties Bayes records (bench/e2e's scoreBody, in 64
//     variants) on POST /api/score/batch, written from one goroutine while another reads the
//     answers. Every answer line is checked byte for byte against the unary path's answer for
//     the same body, and the summary line against the counts. Throughput is set against an
//     in-process loop doing the same decode + measure + encode per record (bench/bare's work),
//     run in halves before and after the stream; the server's peak RSS growth is its VmHWM
//     after the stream minus its VmHWM before.
//  2. The same batch over gRPC (ScoringService.ScoreBatch) to a fresh process: each answer
//     checked against the unary gRPC answer for its body, the trailer's counts; throughput set
//     against the same in-process loop with protobuf in place of JSON (the same decode + measure
//     + encode for a gRPC record), and for information against the JSON loop; peak RSS growth
//     likewise.
//  3. A group stream of -students students on POST /api/forecast/reading/group/stream: the peak
//     RSS growth likewise, and the final group line against the group recomputed here from the
//     per-student answer lines (the sums of pkg/measure's GroupAccumulator).
//  4. The same group stream over gRPC (ForecastService.ForecastGroupStream), likewise: the first
//     answers against the unary gRPC group, the aggregate against the recomputed one.
//
// Each figure is printed beside its target; the exit status is 1 when a target is missed or an
// answer is wrong. Bounded by -timeout; the servers die with this process (Pdeathsig).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-batch:", err)
		stop()
		os.Exit(1)
	}
}

type options struct {
	bin      string
	runs     int
	records  int
	students int
	timeout  time.Duration
}

// figures are one run's measurements.
type figures struct {
	batchRPS, refRPS float64 // records a second: the stream, the in-process loop
	batchCPU         float64 // server CPU seconds per record
	refCPU           float64 // the in-process loop's CPU seconds per record
	batchRSS         float64 // bytes: server peak RSS growth over the stream
	grpcRPS          float64 // the same batch over gRPC (ScoreBatch): records a second
	protoRefRPS      float64 // the in-process loop with protobuf in place of JSON
	grpcCPU          float64 // server CPU seconds per record over gRPC
	protoRefCPU      float64 // the protobuf loop's CPU seconds per record
	grpcRSS          float64 // bytes: server peak RSS growth over the gRPC stream
	groupSPS         float64 // students a second
	groupRSS         float64 // bytes
	groupMaxRelDiff  float64 // the group line against the recomputed group
	// VmRSS above the idle VmHWM (MiB) after each tenth of the answers: flat if memory is constant.
	grpcGroupSPS, grpcGroupRSS                        float64 // the group stream over gRPC: students a second, bytes
	grpcGroupMaxRelDiff                               float64
	batchTrail, groupTrail, grpcTrail, grpcGroupTrail []float64
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("bench-batch", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin", "directory of the built scoring and forecast binaries")
	fs.IntVar(&o.runs, "runs", 2, "runs; each figure is the median over them (the worse of two)")
	fs.IntVar(&o.records, "records", 1_000_000, "scoring records in the batch")
	fs.IntVar(&o.students, "students", 1_000_000, "students in the group stream")
	fs.DurationVar(&o.timeout, "timeout", 12*time.Minute, "the whole run's limit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.runs < 1 || o.records < 1 || o.students < 1 {
		return fmt.Errorf("-runs, -records and -students must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if !procs.Pinned() {
		fmt.Println("warning: taskset not found; servers and load share the cores (ratios less meaningful)")
	}
	var all []figures
	for i := 1; i <= o.runs; i++ {
		var f figures
		if err := measureBatch(ctx, o, &f); err != nil {
			return fmt.Errorf("run %d: score batch: %w", i, err)
		}
		if err := measureGRPCBatch(ctx, o, &f); err != nil {
			return fmt.Errorf("run %d: score batch over gRPC: %w", i, err)
		}
		if err := measureGroup(ctx, o, &f); err != nil {
			return fmt.Errorf("run %d: group stream: %w", i, err)
		}
		if err := measureGRPCGroup(ctx, o, &f); err != nil {
			return fmt.Errorf("run %d: group stream over gRPC: %w", i, err)
		}
		fmt.Printf("run %d: batch %.0f records/s (%.1f µs server CPU a record), in-process loop %.0f records/s (%.1f µs CPU), RSS +%.1f MiB; group %.0f students/s, RSS +%.1f MiB, group line vs recomputed: max relative difference %.2g\n",
			i, f.batchRPS, f.batchCPU*1e6, f.refRPS, f.refCPU*1e6, f.batchRSS/mib, f.groupSPS, f.groupRSS/mib, f.groupMaxRelDiff)
		fmt.Printf("       gRPC batch %.0f records/s (%.1f µs server CPU a record), protobuf in-process loop %.0f records/s (%.1f µs CPU), RSS +%.1f MiB\n",
			f.grpcRPS, f.grpcCPU*1e6, f.protoRefRPS, f.protoRefCPU*1e6, f.grpcRSS/mib)
		fmt.Printf("       gRPC group %.0f students/s, RSS +%.1f MiB, aggregate vs recomputed: max relative difference %.2g\n", f.grpcGroupSPS, f.grpcGroupRSS/mib, f.grpcGroupMaxRelDiff)
		fmt.Printf("       VmRSS above idle after each tenth (MiB): batch %s; gRPC batch %s; group %s; gRPC group %s\n", trail(f.batchTrail), trail(f.grpcTrail), trail(f.groupTrail), trail(f.grpcGroupTrail))
		all = append(all, f)
	}
	return report(all, o)
}

const mib = 1 << 20

func trail(vs []float64) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.0f", v)
	}
	return b.String()
}

type target struct {
	name    string
	value   func(figures) float64
	limit   float64
	atLeast bool
	info    bool // reported, not a target
	format  string
}

func report(all []figures, o options) error {
	targets := []target{
		{fmt.Sprintf("%d-record score batch throughput / in-process loop's", o.records), func(f figures) float64 { return f.batchRPS / f.refRPS }, 0.7, true, false, "%.2f"},
		{"score batch: server peak RSS growth (MiB)", func(f figures) float64 { return f.batchRSS / mib }, 64, false, false, "%.1f"},
		{"the same over gRPC (ScoreBatch) / the protobuf in-process loop's", func(f figures) float64 { return f.grpcRPS / f.protoRefRPS }, 0.7, true, false, "%.2f"},
		{"gRPC score batch: server peak RSS growth (MiB)", func(f figures) float64 { return f.grpcRSS / mib }, 64, false, false, "%.1f"},
		{fmt.Sprintf("%d-student group stream: server peak RSS growth (MiB)", o.students), func(f figures) float64 { return f.groupRSS / mib }, 64, false, false, "%.1f"},
		{"group line vs recomputed from the student lines: max relative diff", func(f figures) float64 { return f.groupMaxRelDiff }, 1e-9, false, false, "%.2g"},
		{"the group stream over gRPC: server peak RSS growth (MiB)", func(f figures) float64 { return f.grpcGroupRSS / mib }, 64, false, false, "%.1f"},
		{"gRPC group aggregate vs recomputed from the answers: max rel. diff", func(f figures) float64 { return f.grpcGroupMaxRelDiff }, 1e-9, false, false, "%.2g"},
		{"info: score batch records/s", func(f figures) float64 { return f.batchRPS }, 0, false, true, "%.0f"},
		{"info: in-process loop records/s", func(f figures) float64 { return f.refRPS }, 0, false, true, "%.0f"},
		{"info: score batch server CPU µs a record", func(f figures) float64 { return f.batchCPU * 1e6 }, 0, false, true, "%.1f"},
		{"info: in-process loop CPU µs a record", func(f figures) float64 { return f.refCPU * 1e6 }, 0, false, true, "%.1f"},
		{"info: score batch server CPU a record / in-process loop's", func(f figures) float64 { return f.batchCPU / f.refCPU }, 0, false, true, "%.2f"},
		{"info: gRPC score batch records/s", func(f figures) float64 { return f.grpcRPS }, 0, false, true, "%.0f"},
		{"info: protobuf in-process loop records/s", func(f figures) float64 { return f.protoRefRPS }, 0, false, true, "%.0f"},
		{"info: gRPC score batch / the JSON in-process loop's", func(f figures) float64 { return f.grpcRPS / f.refRPS }, 0, false, true, "%.2f"},
		{"info: gRPC score batch server CPU a record / protobuf loop's", func(f figures) float64 { return f.grpcCPU / f.protoRefCPU }, 0, false, true, "%.2f"},
		{"info: group stream students/s", func(f figures) float64 { return f.groupSPS }, 0, false, true, "%.0f"},
		{"info: gRPC group stream students/s", func(f figures) float64 { return f.grpcGroupSPS }, 0, false, true, "%.0f"},
	}
	head := "figure (median of runs)"
	if len(all) == 2 {
		head = "figure (the worse of 2 runs)"
	}
	fmt.Printf("\n%-72s %10s %10s  %s\n", head, "measured", "target", "")
	missed := 0
	for _, t := range targets {
		var vs []float64
		for _, f := range all {
			vs = append(vs, t.value(f))
		}
		sort.Float64s(vs)
		m := vs[len(vs)/2] // of two, the larger: the worse for the ≤ targets
		if t.atLeast {
			m = vs[(len(vs)-1)/2] // of two, the smaller
		}
		if t.info {
			fmt.Printf("%-72s %10s\n", t.name, fmt.Sprintf(t.format, m))
			continue
		}
		ok := m <= t.limit
		op := "≤"
		if t.atLeast {
			ok, op = m >= t.limit, "≥"
		}
		verdict := "met"
		if !ok {
			verdict, missed = "MISSED", missed+1
		}
		fmt.Printf("%-72s %10s %9s%g  %s\n", t.name, fmt.Sprintf(t.format, m), op, t.limit, verdict)
	}
	if missed > 0 {
		return fmt.Errorf("%d targets missed", missed)
	}
	return nil
}
