package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Attack 7, throttle eviction churn: a registered client's failed-login count, drained from one
// address, was forgotten once 12,000 failures at made-up client ids from 632 addresses had
// pushed it out of the throttle's tables, and the next guesses at the client were checked again.
// The soak stands as the ingress in front of the binary (YARDSTICK_TRUSTED_PROXIES=127.0.0.0/8)
// and names each failure's address in X-Forwarded-For, so the server sees 632 addresses:
// 19 failures each, under the per-address burst of 20, so every one of them reaches the tables.
// The guesses after the churn come from the draining address and must all be answered 429: the
// count refills one failure per 6 s, so the churn and the guesses must fit in that time
// (churnWithin), or a 401 would be the throttle's due and not a lapse.
const (
	churnFailures = 12000
	churnAddrs    = 632
	churnWorkers  = 32
	churnGuesses  = 100
	drainMost     = 50 // wrong secrets at most before the 429
	churnWithin   = 5 * time.Second
	drainFrom     = "203.0.113.9" // the attacker's address, as the ingress names it
	proxies       = "127.0.0.0/8"
)

// failFrom posts a login of id with a wrong secret as if forwarded for addr.
func failFrom(c *http.Client, base, id, addr string, n int) int {
	status, _ := do(c, base+"/authToken", "application/json", loginBody(id, fmt.Sprintf("guess-%d", n)), "X-Forwarded-For", addr)
	return status
}

func throttleChurn(ctx context.Context, e *attackEnv) (string, error) {
	dir, err := os.MkdirTemp("", "yardstick-soak-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cs, err := newClients("target", "bystander")
	if err != nil {
		return "", err
	}
	target := cs[0].client
	path := filepath.Join(dir, "clients.yaml")
	if err := writeClients(path, cs); err != nil {
		return "", err
	}
	p, err := startPod(ctx, e, e.scoring, path, "YARDSTICK_TRUSTED_PROXIES="+proxies)
	if err != nil {
		return "", err
	}
	defer p.stop()
	c := clientFrom(attackerFrom)
	// Warm-up: the connections the churn uses, so their dialling is not in its time.
	for i := range churnWorkers {
		if s := failFrom(c, p.base, "warm-up", fmt.Sprintf("198.51.100.%d", i+1), 0); s != http.StatusUnauthorized {
			return "", fmt.Errorf("warm-up failure: status %d; want 401", s)
		}
	}

	drained := 0
	for n := 1; n <= drainMost && drained == 0; n++ {
		switch s := failFrom(c, p.base, target.id, drainFrom, n); s {
		case http.StatusTooManyRequests:
			drained = n
		case http.StatusUnauthorized:
		default:
			return "", fmt.Errorf("draining: status %d; want 401 or 429", s)
		}
	}
	if drained == 0 {
		return "", fmt.Errorf("the client was not throttled after %d wrong secrets", drainMost)
	}
	drainedAt := time.Now()

	var next atomic.Int64
	var mu sync.Mutex
	junk := tally{}
	var wg sync.WaitGroup
	for range churnWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= churnFailures {
					return
				}
				a := i % churnAddrs
				s := failFrom(c, p.base, fmt.Sprintf("junk-%d", i), fmt.Sprintf("10.200.%d.%d", a/250, a%250+1), i)
				mu.Lock()
				junk[fmt.Sprint(s)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	churned := time.Since(drainedAt)

	guesses, retryAfter := tally{}, tally{}
	for n := range churnGuesses {
		status, ra := guess(c, p.base, target.id, drainFrom, n)
		guesses[fmt.Sprint(status)]++
		if status == http.StatusTooManyRequests {
			retryAfter[ra]++
		}
	}
	took := time.Since(drainedAt)
	bystander := loginStatus(clientFrom(""), p.base, cs[1].client)
	counted := metric(p.base, `yardstick_requests_total{code="401",front="http",route="/authToken",service="scoring"}`)

	fmt.Fprintf(e.out, "drained from %s: %d wrong secrets, the last answered 429; then %d failures at made-up ids from %d addresses (X-Forwarded-For through %s) in %.1f s: %s\n",
		drainFrom, drained, churnFailures, churnAddrs, proxies, churned.Seconds(), junk)
	fmt.Fprintf(e.out, "%d new guesses at the drained client from %s, done %.1f s after the drain: %s, Retry-After %s; another client's correct login: %d\n",
		churnGuesses, drainFrom, took.Seconds(), guesses, retryAfter, bystander)
	e.v.check(junk["401"] == churnFailures, "every junk failure was checked and counted (401): %d of %d", junk["401"], churnFailures)
	want401 := churnWorkers + drained - 1 + junk["401"] + guesses["401"] // warm-up, drain, churn, guesses
	e.v.check(counted == want401, "the server's metrics agree: %d answers 401 on /authToken (want %d)", counted, want401)
	e.v.check(took <= churnWithin, "the churn and the guesses fit before the count refills: %.1f s (target <= %s)", took.Seconds(), churnWithin)
	e.v.check(guesses["429"] == churnGuesses, "new guesses answered 429 after the churn: %d of %d", guesses["429"], churnGuesses)
	e.v.check(bystander == http.StatusOK, "another client's correct login answered 200 (got %d)", bystander)
	return fmt.Sprintf("%d of %d guesses 429 after %d junk failures from %d addresses (%.1f s after the drain)",
		guesses["429"], churnGuesses, junk["401"], churnAddrs, took.Seconds()), nil
}

// guess is a wrong secret at id forwarded for addr; it returns the status and Retry-After.
func guess(c *http.Client, base, id, addr string, n int) (int, string) {
	req, err := http.NewRequest(http.MethodPost, base+"/authToken", strings.NewReader(loginBody(id, fmt.Sprintf("late-%d", n))))
	if err != nil {
		return 0, ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// metric is the value of the sample named series (name and labels as /metrics writes them) in
// the server's metrics; -1 when they do not answer or have no such sample.
func metric(base, series string) int {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return int(v)
			}
		}
	}
	return -1
}
