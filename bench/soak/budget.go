package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// The memory-budget soak (issue 10: twenty 100,000-student group forecasts at once took a process
// to 2 GiB). The forecast binary runs as in a pod with a 512 MiB memory limit: GOMEMLIMIT 90% of
// it and a budget of half of it (what automemlimit and the budget derive from the cgroup there).
// Twenty clients post a 100,000-student group forecast at once; those refused with 503 wait their
// Retry-After and post again, until every one is answered 200 (bounded by budgetSoakTimeout).
// Targets: the peak resident memory (VmHWM) stays under the budget plus the process's baseline;
// every refusal is 503 with Retry-After; nothing else but 200 is answered; all twenty complete.
const (
	budgetSoakClients  = 20
	budgetSoakStudents = 100000
	podLimit           = 512 << 20
	soakBudgetBytes    = podLimit / 2
	soakGoMemLimit     = podLimit * 9 / 10
	budgetSoakTimeout  = 60 * time.Second
)

func soakBudget(bin string, out io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), budgetSoakTimeout+15*time.Second)
	defer cancel()
	srv, err := startServer(ctx, bin, "", os.Getenv("SOAK_PINNED") != "",
		"YARDSTICK_MEMORY_BUDGET="+strconv.Itoa(soakBudgetBytes), "GOMEMLIMIT="+strconv.Itoa(soakGoMemLimit), "YARDSTICK_LOG_LEVEL=warn")
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	tok, err := login(srv.base, client{"demo", "demo-secret"})
	if err != nil {
		return 0, err
	}
	// Baseline: the process after start and one small group forecast (pools, plans, token cache).
	small := groupRequest(100)
	if status, _, err := postGroup(srv.base, tok, small); err != nil || status != http.StatusOK {
		return 0, fmt.Errorf("warm-up: status %d, %v", status, err)
	}
	baseline, err := vmHWM(srv.Pid())
	if err != nil {
		return 0, err
	}

	body := groupRequest(budgetSoakStudents)
	type result struct {
		refusals, others int
		retryAfters      map[string]int
		done             bool
		took             time.Duration
	}
	results := make([]result, budgetSoakClients)
	start := time.Now()
	deadline := start.Add(budgetSoakTimeout)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			r := &results[i]
			r.retryAfters = map[string]int{}
			for time.Now().Before(deadline) {
				status, retryAfter, err := postGroup(srv.base, tok, body)
				switch {
				case err == nil && status == http.StatusOK:
					r.done, r.took = true, time.Since(start)
					return
				case err == nil && status == http.StatusServiceUnavailable:
					r.refusals++
					r.retryAfters[retryAfter]++
					secs, perr := strconv.Atoi(retryAfter)
					if perr != nil || secs < 1 {
						r.others++
						return
					}
					time.Sleep(time.Duration(secs) * time.Second)
				default:
					r.others++
					fmt.Fprintf(os.Stderr, "client %d: status %d, %v\n", i, status, err)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	peak, err := vmHWM(srv.Pid())
	if err != nil {
		return 0, err
	}

	done, refusals, others := 0, 0, 0
	retryAfters := map[string]int{}
	var last time.Duration
	for _, r := range results {
		refusals += r.refusals
		others += r.others
		for k, v := range r.retryAfters {
			retryAfters[k] += v
		}
		if r.done {
			done++
			last = max(last, r.took)
		}
	}
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(out, "memory-budget soak: forecast binary as in a pod with a %s limit (GOMEMLIMIT %s, budget %s); %d clients × one %d-student group forecast (%.1f MB of JSON), 503s retried after Retry-After\n\n",
		mib(podLimit), mib(soakGoMemLimit), mib(soakBudgetBytes), budgetSoakClients, budgetSoakStudents, float64(len(body))/1e6)
	fmt.Fprintf(out, "baseline VmHWM %s, peak VmHWM %s; %d of %d answered 200 (last after %.1f s, run %.1f s); 503 refusals %d (Retry-After %v); other answers %d\n\n",
		mib(baseline), mib(peak), done, budgetSoakClients, last.Seconds(), wall.Seconds(), refusals, retryAfters, others)

	v := verdicts{out: out}
	check := v.check
	check(peak <= baseline+soakBudgetBytes, "peak VmHWM %s <= budget %s + baseline %s", mib(peak), mib(soakBudgetBytes), mib(baseline))
	check(refusals > 0 && len(retryAfters) == 1 && retryAfters["1"] == refusals, "the excess is refused with 503 and Retry-After: 1 (%d refusals)", refusals)
	check(others == 0, "no answer but 200 and 503 (got %d others)", others)
	check(done == budgetSoakClients, "every client answered 200 within %s (got %d of %d)", budgetSoakTimeout, done, budgetSoakClients)
	return v.exitCode(), nil
}

// groupRequest is a group forecast body of n students.
func groupRequest(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"testUncertainty":30,"cutLevels":[400,600,800],"studentData":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"priorAbility":%d,"priorUncertainty":%d,"elapsedDays":%d}`, 200+i%900, 40+i%50, i%365)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// postGroup posts a group forecast on a connection of its own and returns the status and
// Retry-After.
func postGroup(base, tok string, body []byte) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/api/forecast/reading/group", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			ExceptionType string `json:"exceptionType"`
		}
		if json.NewDecoder(resp.Body).Decode(&e) != nil || e.ExceptionType != "APIException" && resp.StatusCode == http.StatusServiceUnavailable {
			return resp.StatusCode, "", fmt.Errorf("503 without the APIException body")
		}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), err
}
