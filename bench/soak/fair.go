package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// The fair-share soak (issue 30), against the built forecast binary with a clients file of four
// clients. Part 1: a client ("flood", rate 20/s) floods single forecasts at 6× its rate in
// every other second, while another ("steady", no limits) sends 20/s throughout; quiet and
// flood windows alternate, so the machine's other work weighs on both alike. Targets: every one
// of steady's calls answered 200, its p99 under the flood within 3× its quiet p99; the flood's
// excess answered 429 with Retry-After and the RateLimit headers. Part 2: a client ("groups",
// concurrency 2) posts 10 group forecasts at once, each retried after its 429's Retry-After,
// while another ("single") posts one group forecast of the same size: groups' forecasts run at
// most 2 at a time (read from the server's own request lines), and single's is answered within
// 3× the time it takes alone.
const (
	fairRate       = 20
	fairFloodRatio = 6
	fairSteadyRate = 20
	fairPairs      = 8
	fairGroups     = 10
	fairGroupConc  = 2
	fairStudents   = 20000
	fairMaxRatio   = 3.0
	fairTimeout    = 60 * time.Second
)

func soakFair(bin string, out io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fairTimeout+15*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "yardstick-soak-fair-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	limits := map[string]string{
		"flood":  fmt.Sprintf("{rate: %d}", fairRate),
		"steady": "",
		"groups": fmt.Sprintf("{concurrency: %d}", fairGroupConc),
		"single": "",
	}
	clients, path, err := fairClients(dir, limits)
	if err != nil {
		return 0, err
	}
	var logs proc.LogBuffer
	pin := os.Getenv("SOAK_PINNED") != ""
	srv, err := startServerLogging(ctx, bin, path, pin, &logs)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	toks := map[string]string{}
	for id, c := range clients {
		if toks[id], err = login(srv.base, c); err != nil {
			return 0, err
		}
	}
	where := "server and load unpinned (no taskset or one CPU)"
	if pin {
		where = "server on CPU 0, load on CPU 1 (taskset)"
	}
	fmt.Fprintf(out, "fair-share soak: forecast binary, %s\n\n", where)
	v := verdicts{out: out}
	fairRatePart(ctx, srv.base, toks, out, &v)
	fairConcurrencyPart(ctx, srv.base, toks, &logs, out, &v)
	return v.exitCode(), nil
}

// fairClients writes the clients file into dir: one tool-made client per id with its limits
// (the server runs in dev mode, beside the demo client, with an ephemeral key).
func fairClients(dir string, limits map[string]string) (map[string]client, string, error) {
	var b strings.Builder
	b.WriteString("clients:\n")
	out := map[string]client{}
	ids := make([]string, 0, len(limits))
	for id := range limits {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		secret, hash, err := token.GenerateSecret()
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(&b, "  - clientId: %s\n    secretHash: %s\n    services: [forecast]\n    permissions: [\"*\"]\n", id, hash)
		if limits[id] != "" {
			fmt.Fprintf(&b, "    limits: %s\n", limits[id])
		}
		out[id] = client{id, secret}
	}
	path := filepath.Join(dir, "clients.yaml")
	return out, path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// fairSample is one call of part 1.
type fairSample struct {
	who, window string
	status      int
	latency     time.Duration
	retryAfter  string
	policy      string
}

func fairRatePart(ctx context.Context, base string, toks map[string]string, out io.Writer, v *verdicts) {
	body := `{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800]}`
	var mu sync.Mutex
	var samples []fairSample
	var current atomic.Value
	current.Store(settle)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	gen := func(who string, rate int, active func(string) bool) {
		c := clientFrom("")
		wg.Go(func() {
			t := time.NewTicker(time.Second / time.Duration(rate))
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				w := current.Load().(string)
				if !active(w) {
					continue
				}
				wg.Go(func() {
					s := fairCall(c, base+"/api/forecast/reading", toks[who], body)
					s.who, s.window = who, w
					mu.Lock()
					samples = append(samples, s)
					mu.Unlock()
				})
			}
		})
	}
	gen("steady", fairSteadyRate, func(string) bool { return true })
	gen("flood", fairRate*fairFloodRatio, func(w string) bool { return w == attack })
	windows := []window{{settle, time.Second}}
	for range fairPairs {
		windows = append(windows, window{quiet, time.Second}, window{attack, time.Second})
	}
	windows = append(windows, window{settle, 500 * time.Millisecond})
	for _, w := range windows {
		current.Store(w.kind)
		select {
		case <-ctx.Done():
		case <-time.After(w.dur):
		}
	}
	cancel()
	wg.Wait()

	pick := func(who, window string) []sample {
		var s []sample
		for _, x := range samples {
			if x.who == who && x.window == window {
				s = append(s, sample{latency: x.latency, status: x.status})
			}
		}
		return s
	}
	fmt.Fprintf(out, "part 1: client flood (rate %d/s) sends %d/s in every other second; client steady (no limits) %d/s throughout; %d × (1 s quiet, 1 s flood)\n",
		fairRate, fairRate*fairFloodRatio, fairSteadyRate, fairPairs)
	fmt.Fprintf(out, "%-36s %6s %9s %9s   %s\n", "", "n", "p50", "p99", "statuses")
	row := func(label string, s []sample) time.Duration {
		p99 := percentile(s, 0.99)
		fmt.Fprintf(out, "%-36s %6d %9s %9s   %s\n", label, len(s), ms(percentile(s, 0.5)), ms(p99), statuses(s))
		return p99
	}
	qp99 := row("steady, quiet", pick("steady", quiet))
	fp99 := row("steady, under the flood", pick("steady", attack))
	floods := pick("flood", attack)
	row("flood", floods)
	ok, refused, goodRefusals := 0, 0, 0
	for _, x := range samples {
		if x.who != "flood" || x.window != attack {
			continue
		}
		switch x.status {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			refused++
			if secs, err := strconv.Atoi(x.retryAfter); err == nil && secs >= 1 && x.policy == fmt.Sprintf(`"rate";q=%d;w=1`, fairRate) {
				goodRefusals++
			}
		}
	}
	steady := append(pick("steady", quiet), pick("steady", attack)...)
	fmt.Fprintf(out, "flood: %d answered 200 (%.1f/s over %d s), %d refused 429\n\n", ok, float64(ok)/fairPairs, fairPairs, refused)
	v.check(len(steady) > 0 && non200(steady) == 0, "steady's calls answered 200: %d of %d (target 100%%)", len(steady)-non200(steady), len(steady))
	v.check(qp99 > 0 && ratio(fp99, qp99) <= fairMaxRatio, "steady's p99 under the flood / quiet: %s / %s = %.2f (target <= %.0f)", ms(fp99), ms(qp99), ratio(fp99, qp99), fairMaxRatio)
	v.check(refused > 0 && goodRefusals == refused, "the flood's excess answered 429 with Retry-After >= 1 and RateLimit-Policy \"rate\";q=%d;w=1: %d of %d", fairRate, goodRefusals, refused)
	// Within one second the bucket gives at most its burst (one second of the rate) plus the rate.
	v.check(float64(ok)/fairPairs <= 2*fairRate*1.2, "the flood's accepted calls: %.1f/s in its seconds (at most burst + rate = %d/s, +20%%)", float64(ok)/fairPairs, 2*fairRate)
}

// fairCall posts body with tok and reports the answer.
func fairCall(c *http.Client, url, tok, body string) fairSample {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return fairSample{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return fairSample{latency: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fairSample{status: resp.StatusCode, latency: time.Since(start), retryAfter: resp.Header.Get("Retry-After"),
		policy: resp.Header.Get("RateLimit-Policy")}
}

func fairConcurrencyPart(ctx context.Context, base string, toks map[string]string, logs *proc.LogBuffer, out io.Writer, v *verdicts) {
	body := groupRequest(fairStudents)
	// single's group forecast alone, three times (the median is its quiet time).
	var alone []time.Duration
	for range 3 {
		start := time.Now()
		if status, _, err := postGroup(base, toks["single"], body); err != nil || status != http.StatusOK {
			v.check(false, "single's group forecast alone: status %d, %v", status, err)
			return
		}
		alone = append(alone, time.Since(start))
	}
	slices.Sort(alone)
	quietTime := alone[1]

	deadline := time.Now().Add(fairTimeout)
	var wg sync.WaitGroup
	var done, refusals, others atomic.Int64
	for range fairGroups {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				status, retryAfter, err := postGroup(base, toks["groups"], body)
				switch {
				case err == nil && status == http.StatusOK:
					done.Add(1)
					return
				case err == nil && status == http.StatusTooManyRequests:
					refusals.Add(1)
					secs, perr := strconv.Atoi(retryAfter)
					if perr != nil || secs < 1 {
						others.Add(1)
						return
					}
					time.Sleep(time.Duration(secs) * time.Second)
				default:
					others.Add(1)
					fmt.Fprintf(os.Stderr, "groups: status %d, %v\n", status, err)
					return
				}
			}
		})
	}
	// single's forecasts, one after another while groups' run (the median is its time alongside).
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	time.Sleep(200 * time.Millisecond) // groups' forecasts are running and retrying
	var alongside []time.Duration
	status, singleErr := http.StatusOK, error(nil)
	for running := true; running && status == http.StatusOK && singleErr == nil; {
		start := time.Now()
		status, _, singleErr = postGroup(base, toks["single"], body)
		alongside = append(alongside, time.Since(start))
		select {
		case <-allDone:
			running = false
		default:
		}
	}
	<-allDone
	slices.Sort(alongside)
	singleTime := alongside[len(alongside)/2]
	time.Sleep(100 * time.Millisecond) // the last request lines written
	peak, runs := peakConcurrency(logs.String(), "groups", "/api/forecast/reading/group")

	fmt.Fprintf(out, "part 2: client groups (concurrency %d) posts %d group forecasts of %d students at once, each retried after its 429's Retry-After; client single posts one alongside\n",
		fairGroupConc, fairGroups, fairStudents)
	fmt.Fprintf(out, "groups: %d of %d answered 200, %d refusals 429, %d other answers; at most %d ran at once (of %d runs, from the server's request lines)\n",
		done.Load(), fairGroups, refusals.Load(), others.Load(), peak, runs)
	fmt.Fprintf(out, "single: alone %s (median %s); alongside groups', %d runs one after another: median %s, p90 %s, max %s (last status %d)\n\n",
		msList(alone), ms(quietTime), len(alongside), ms(singleTime), ms(alongside[len(alongside)*9/10]), ms(alongside[len(alongside)-1]), status)
	v.check(done.Load() == fairGroups && others.Load() == 0, "groups' forecasts all answered 200 after their 429s (%d of %d, %d others)", done.Load(), fairGroups, others.Load())
	v.check(peak == fairGroupConc && runs == fairGroups, "groups' forecasts ran at most %d at a time: peak %d over %d runs", fairGroupConc, peak, runs)
	v.check(singleErr == nil && status == http.StatusOK && len(alongside) >= 3 && ratio(singleTime, quietTime) <= fairMaxRatio,
		"single's group forecast alongside / alone, medians: %s / %s = %.2f (target <= %.0f)", ms(singleTime), ms(quietTime), ratio(singleTime, quietTime), fairMaxRatio)
}

func msList(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, ms(d))
	}
	return strings.Join(s, ", ")
}

// peakConcurrency reads the server's JSON request lines: the calls of client on route answered
// 200, each from its end (the line's time) back by its duration, and returns the most that
// overlapped and how many there were.
func peakConcurrency(logs, client, route string) (peak, runs int) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Time     time.Time `json:"time"`
			Route    string    `json:"route"`
			ClientID string    `json:"client_id"`
			Status   int       `json:"status"`
			Duration float64   `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Route != route || l.ClientID != client || l.Status != http.StatusOK {
			continue
		}
		end := l.Time
		begin := end.Add(-time.Duration(l.Duration * float64(time.Millisecond)))
		edges = append(edges, edge{begin, 1}, edge{end, -1})
		runs++
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a begin at the same instant
	})
	n := 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	return peak, runs
}
