// Command bench-e2e measures the JSON front against its reference, as `make bench-e2e` runs it:
// the services and the bare handler (bench/bare) as built binaries pinned to core 0, this load
// generator pinned to core 1, on loopback. It prints each ratio beside its target, takes the
// median of several runs (machines are shared and noisy: ratios measured in the same run, not
// absolute times), and exits 1 if a target is missed. Every run is bounded in time and requests.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

type options struct {
	bin      string
	runs     int
	duration time.Duration
	conns    int
	students int
	// abBin, when set, runs the A/B instead: its scoring binary against -bin's (ab.go).
	abBin string
	// abTracing runs the A/B of -bin's scoring with tracing off against the same with every
	// span exported to a receiver in this process.
	abTracing bool
	// abLimits runs the A/B of -bin's scoring without client limits against the same with a
	// limit far above the load (issue 30); abRedis shares B's rate through that Redis.
	abLimits bool
	abRedis  string
}

// figures are one run's measurements.
type figures struct {
	bareRPS, jsonRPS       float64
	bareCPU, jsonCPU       float64 // CPU seconds per request
	grpcCPU                float64
	plainGRPCCPU           float64 // bench/baregrpc: grpc-go alone
	jsonAllocs             float64 // per request, from the runtime's malloc counter
	groupJSON, groupRef    float64 // seconds for one 100,000-student group
	groupRSS, groupPayload float64 // bytes: peak RSS growth; body + answer
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("bench-e2e", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin", "directory of the built scoring, forecast and bare binaries")
	fs.IntVar(&o.runs, "runs", 3, "runs; each ratio is the median over them")
	fs.DurationVar(&o.duration, "duration", 6*time.Second, "load duration of each throughput measurement (split into interleaved windows)")
	fs.IntVar(&o.conns, "conns", 8, "concurrent connections")
	fs.IntVar(&o.students, "students", 100000, "students in the group forecast")
	fs.StringVar(&o.abBin, "ab-bin", "", "A/B instead: the directory of a reference scoring binary (A) against -bin's (B), tracing off")
	fs.BoolVar(&o.abTracing, "ab-tracing", false, "A/B instead: -bin's scoring with tracing off (A) against the same exporting every span (B); with -ab-bin, A is its scoring, also exporting")
	fs.BoolVar(&o.abLimits, "ab-limits", false, "A/B instead: -bin's scoring without client limits (A) against the same with a rate and concurrency far above the load (B)")
	fs.StringVar(&o.abRedis, "ab-redis", "", "with -ab-limits: B shares its rate through this Redis (redis://host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.abBin != "" || o.abTracing || o.abLimits {
		return runAB(ctx, o)
	}
	if !procs.Pinned() {
		fmt.Println("warning: taskset not found; servers and load share the cores (ratios less meaningful)")
	}
	var all []figures
	for i := 1; i <= o.runs; i++ {
		f, err := measureRun(ctx, o)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		fmt.Printf("run %d: bare %.0f req/s %.1f µs CPU; JSON %.0f req/s %.1f µs CPU %.0f allocs; gRPC %.1f µs CPU (plain grpc-go %.1f); group JSON %.3f s, reference %.3f s, RSS +%.0f MB for %.1f MB in+out\n",
			i, f.bareRPS, f.bareCPU*1e6, f.jsonRPS, f.jsonCPU*1e6, f.jsonAllocs, f.grpcCPU*1e6, f.plainGRPCCPU*1e6, f.groupJSON, f.groupRef, f.groupRSS/1e6, f.groupPayload/1e6)
		all = append(all, f)
	}
	return report(all)
}

type target struct {
	name    string
	value   func(figures) float64
	limit   float64
	atLeast bool
	info    bool // reported, not a target
}

var targets = []target{
	{"40-item JSON throughput / bare handler's (8 connections)", func(f figures) float64 { return f.jsonRPS / f.bareRPS }, 0.85, true, false},
	{"40-item JSON CPU per request / bare handler's", func(f figures) float64 { return f.jsonCPU / f.bareCPU }, 1.2, false, false},
	{"40-item JSON allocations per request (server)", func(f figures) float64 { return f.jsonAllocs }, 150, false, false},
	{"40-item gRPC CPU per request / bare JSON handler's", func(f figures) float64 { return f.grpcCPU / f.bareCPU }, 1.0, false, false},
	{"100,000-student group over JSON / encoding/json decode+math+encode", func(f figures) float64 { return f.groupJSON / f.groupRef }, 1.2, false, false},
	{"group peak RSS growth / (body + answer bytes)", func(f figures) float64 { return f.groupRSS / f.groupPayload }, 3, false, false},
	{"info: plain grpc-go server's CPU per request / bare JSON handler's", func(f figures) float64 { return f.plainGRPCCPU / f.bareCPU }, 0, false, true},
	{"info: gRPC CPU per request / plain grpc-go server's", func(f figures) float64 { return f.grpcCPU / f.plainGRPCCPU }, 0, false, true},
}

func report(all []figures) error {
	fmt.Printf("\n%-70s %10s %10s  %s\n", "ratio (median of runs)", "measured", "target", "")
	missed := 0
	for _, t := range targets {
		var vs []float64
		for _, f := range all {
			vs = append(vs, t.value(f))
		}
		sort.Float64s(vs)
		m := vs[len(vs)/2]
		if t.info {
			fmt.Printf("%-70s %10.2f\n", t.name, m)
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
		fmt.Printf("%-70s %10.2f %9s%s  %s\n", t.name, m, op, trim(t.limit), verdict)
	}
	if missed > 0 {
		return fmt.Errorf("%d targets missed", missed)
	}
	return nil
}

func trim(v float64) string { return fmt.Sprintf("%g", v) }
