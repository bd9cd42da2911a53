package main

// The attack soak (`make soak-attacks`, -scenario attacks): issue 19's attacks on the gRPC door,
// each re-run against the built binary started as in a pod with a 512 MiB memory limit
// (GOMEMLIMIT=461MiB, YARDSTICK_MEMORY_BUDGET=256MiB), a fresh server per attack so that its
// peak resident memory (VmHWM) is the attack's own. Each attack is bounded in time (25 s at most) and
// in requests, runs on loopback only and stops by itself; -only runs some of them. SOAK_DEBUG=1
// copies the servers' log output to standard error (it is otherwise only counted).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
)

// Targets of issue 19 ("Must be shown").
const (
	maxAttackVmHWM    = 512 << 20              // peak VmHWM for attacks 2-5, 8 and 9
	minReadiness      = 0.95                   // health checks answered SERVING during the slot hog
	maxResetJSONP99   = 250 * time.Millisecond // JSON p99 during the rapid reset
	maxLogLinesPerSec = 50                     // "logged at most a few lines a second per cause"
)

// The pod the issue imitates: GOMEMLIMIT 90% of a 512 MiB limit, a budget of half of it.
const (
	attackGoMemLimit = "461MiB"
	attackBudget     = 256 << 20
)

// attack is one row of the issue's table.
type attackCase struct {
	id, name string
	run      func(ctx context.Context, a *attackEnv) (summary string, err error)
}

func attacks() []attackCase {
	return []attackCase{
		{"1a", "slot hog: headers-only Health/Check every 20 ms", func(ctx context.Context, e *attackEnv) (string, error) {
			return slotHog(ctx, e, healthCheck)
		}},
		{"1b", "slot hog: headers-only IssueToken every 20 ms", func(ctx context.Context, e *attackEnv) (string, error) {
			return slotHog(ctx, e, issueToken)
		}},
		{"2", "HTTP/2 rapid reset with a token, 4 connections", rapidReset},
		{"3", "4 × 25,000 headers-only streams with a token", idleStreams},
		{"4", "48 connections × 12 MB header lists, no token", hugeHeaders},
		{"5a", "16 × 32 concurrent 100,000-student gRPC group calls", groupCalls},
		{"5b", "40 concurrent 16 MiB gRPC messages with a token", bigMessages},
		{"6", "a FIFO at the clients path for 3 s, then a client removed", fifoAtClients},
		{"7", "throttle eviction churn: 12,000 junk failures from 632 addresses", throttleChurn},
		{"8", "login flood at an argon2id client", argonFlood},
		{"9", "64 concurrent 100,000-student JSON group forecasts, compact arrays", compactGroups},
	}
}

// attackEnv is what an attack's run needs: the binaries, where to print, its verdicts.
type attackEnv struct {
	scoring, forecast string // binaries
	out               io.Writer
	v                 *verdicts
	pin               bool
	kubeletOnMain     bool // the kubelet probes the main gRPC port even when a probe port exists
}

// soakAttacks runs the attacks whose ids are in only (all when empty) and prints a table.
func soakAttacks(scoringBin, forecastBin, only string, kubeletOnMain bool, out io.Writer) (int, error) {
	want := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	type row struct {
		id, name, summary string
		failed            bool
	}
	var rows []row
	failed := false
	pin := os.Getenv("SOAK_PINNED") != ""
	fmt.Fprintf(out, "attack soak (issue 19): %s and %s as in a 512 MiB pod (GOMEMLIMIT=%s, YARDSTICK_MEMORY_BUDGET=%d); %s\n",
		scoringBin, forecastBin, attackGoMemLimit, attackBudget, map[bool]string{true: "server on CPU 0, load on CPU 1 (taskset)", false: "unpinned"}[pin])
	for _, a := range attacks() {
		if len(want) > 0 && !want[a.id] && !want[strings.TrimRight(a.id, "ab")] {
			continue
		}
		fmt.Fprintf(out, "\n== %s. %s\n", a.id, a.name)
		v := &verdicts{out: out}
		e := &attackEnv{scoring: scoringBin, forecast: forecastBin, out: out, v: v, pin: pin, kubeletOnMain: kubeletOnMain}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		start := time.Now()
		summary, err := a.run(ctx, e)
		cancel()
		if err != nil {
			v.check(false, "the attack could not run: %v", err)
			summary = "error: " + err.Error()
		}
		fmt.Fprintf(out, "(%.0f s)\n", time.Since(start).Seconds())
		rows = append(rows, row{a.id, a.name, summary, v.failed})
		failed = failed || v.failed
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("no attack has an id in %q", only)
	}
	fmt.Fprintf(out, "\n%-3s %-68s %-4s  %s\n", "#", "attack", "", "figures")
	for _, r := range rows {
		fmt.Fprintf(out, "%-3s %-68s %-4s  %s\n", r.id, r.name, map[bool]string{true: "FAIL", false: "PASS"}[r.failed], r.summary)
	}
	if failed {
		return 1, nil
	}
	return 0, nil
}

// pod is a server started as in the issue's pod, with its log output counted.
type pod struct {
	*server
	probe string // host:port of the gRPC probe listener, "" when the binary has none
	logs  *logCounter
	idle  int64 // VmHWM once ready and warmed up by the attack
}

// startPod starts bin as in a 512 MiB pod. A binary that has a probe listener
// (YARDSTICK_PROBE_ADDR in its -help) gets one on a free port. settings add to the environment
// (NAME=value).
func startPod(ctx context.Context, e *attackEnv, bin string, clientsFile string, settings ...string) (*pod, error) {
	env := append([]string{"GOMEMLIMIT=" + attackGoMemLimit, "YARDSTICK_MEMORY_BUDGET=" + strconv.Itoa(attackBudget)}, settings...)
	p := &pod{logs: &logCounter{causes: tally{}}}
	if hasSetting(bin, "YARDSTICK_PROBE_ADDR") {
		addr, err := proc.FreePort()
		if err != nil {
			return nil, err
		}
		p.probe = addr
		env = append(env, "YARDSTICK_PROBE_ADDR="+addr)
	}
	var logs io.Writer = p.logs
	if os.Getenv("SOAK_DEBUG") != "" {
		logs = io.MultiWriter(p.logs, os.Stderr)
	}
	srv, err := startServerLogging(ctx, bin, clientsFile, e.pin, logs, env...)
	if err != nil {
		return nil, err
	}
	p.server = srv
	return p, nil
}

// hasSetting reports whether bin's -help names the environment variable env.
func hasSetting(bin, env string) bool {
	out, _ := exec.Command(bin, "-help").CombinedOutput() // -help exits 0 or 2 by flag package rules
	return bytes.Contains(out, []byte(env))
}

// settle records the pod's idle peak: after start and whatever warm-up the attack did.
func (p *pod) settle() error {
	var err error
	p.idle, err = vmHWM(p.Pid())
	return err
}

func (p *pod) peak() (int64, error) { return vmHWM(p.Pid()) }

// watch samples the server's goroutine count (its /metrics) every 250 ms until ctx ends; the
// returned function stops it and gives the largest count seen (0: none read).
func (p *pod) watch(ctx context.Context) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var most atomic.Int64
	var wg sync.WaitGroup
	c := &http.Client{Timeout: time.Second}
	wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if n := goroutines(c, p.base); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() int { cancel(); wg.Wait(); return int(most.Load()) }
}

// goroutines reads go_goroutines from the server's metrics; 0 when they do not answer.
func goroutines(c *http.Client, base string) int64 {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(n)
		}
	}
	return 0
}

// checkPeak is the VmHWM verdict of attacks 2-5, 8 and 9.
func (p *pod) checkPeak(e *attackEnv) (int64, error) {
	peak, err := p.peak()
	if err != nil {
		return 0, err
	}
	e.v.check(peak <= maxAttackVmHWM, "peak VmHWM %s (idle %s; target <= %s)", mib(peak), mib(p.idle), mib(maxAttackVmHWM))
	return peak, nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// logCounter counts the server's log output: bytes, lines, and lines by message ("msg" of a
// JSON line), from the moment mark is called. Lines containing keep (when set) are kept, the
// first few of them, for an attack to quote.
type logCounter struct {
	mu      sync.Mutex
	partial []byte
	bytes   int64
	lines   int64
	causes  tally
	keep    string
	kept    []string
}

// keepLines starts keeping the lines that contain s.
func (l *logCounter) keepLines(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keep = s
}

// keptLines are the lines kept so far (at most 8).
func (l *logCounter) keptLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.kept)
}

func (l *logCounter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bytes += int64(len(b))
	rest := b
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(l.partial) < 4096 {
				l.partial = append(l.partial, rest[:min(len(rest), 4096)]...)
			}
			return len(b), nil
		}
		line := rest[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		l.lines++
		l.causes[logCause(line)]++
		if l.keep != "" && len(l.kept) < 8 && bytes.Contains(line, []byte(l.keep)) {
			l.kept = append(l.kept, string(line))
		}
		rest = rest[i+1:]
	}
}

// logCause is a line's level and message, e.g. `WARN "grpc call"`.
func logCause(line []byte) string {
	field := func(name string) string {
		_, v, ok := bytes.Cut(line, []byte(`"`+name+`":"`))
		if !ok {
			return "?"
		}
		v, _, _ = bytes.Cut(v, []byte(`"`))
		return string(v[:min(len(v), 60)])
	}
	return field("level") + " " + strconv.Quote(field("msg"))
}

// mark returns the counts so far and starts the causes afresh.
func (l *logCounter) mark() (bytes, lines int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.causes = tally{}
	return l.bytes, l.lines
}

// count is the number of lines of cause since mark.
func (l *logCounter) count(cause string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.causes[cause])
}

// top is the n most frequent causes since mark.
func (l *logCounter) top(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range l.causes {
		all = append(all, kv{k, v})
	}
	slices.SortFunc(all, func(a, b kv) int { return b.v - a.v })
	var parts []string
	for _, x := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%d × %s", x.v, x.k))
	}
	return strings.Join(parts, "; ")
}
