package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sample is one request of the soak.
type sample struct {
	gen     string // scoring, login, flood, flood-argon2
	window  string // the window the request started in
	latency time.Duration
	status  int // 0 = transport error or dropped
}

// recorder collects samples from every generator.
type recorder struct {
	mu      sync.Mutex
	samples []sample
}

func (r *recorder) add(s sample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

// window is a stretch of the run with one kind of background load; settle windows are not
// measured (they let the work of the previous window drain).
type window struct {
	kind string
	dur  time.Duration
}

// Window kinds.
const (
	quiet       = "quiet"
	attack      = "attack"       // failed logins at tool-made (fast-hash) and unknown client ids
	quiet2      = "quiet-argon2" // the quiet windows of the informational phase
	attackArgon = "attack-argon2"
	settle      = "settle"
)

// clientFrom is an HTTP client whose connections come from the loopback address ip, so the
// server's throttle sees one address per client; keep-alive, as an attacker would.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute,
	}}
}

// do sends one POST and reports its status and latency; the body is read to the end.
func do(c *http.Client, url, contentType, body string, header ...string) (int, time.Duration) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, 0
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, time.Since(start)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// loginBody is a SPEC-style /authToken body.
func loginBody(id, secret string) string {
	return fmt.Sprintf(`{"clientId":%q,"clientSecret":%q}`, id, secret)
}

// run drives the generators through the windows and returns every sample.
func run(ctx context.Context, base, scoringToken string, rates rates, windows []window, goods, targets []client, argon client) []sample {
	var current atomic.Value
	current.Store(settle)
	rec := &recorder{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	inFlight := make(chan struct{}, 2048) // bounds the soak's own goroutines
	gen := func(name string, rate int, active func(string) bool, fire func(i int) (int, time.Duration)) {
		wg.Go(func() {
			t := time.NewTicker(time.Second / time.Duration(rate))
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				w := current.Load().(string)
				if !active(w) {
					continue
				}
				select {
				case inFlight <- struct{}{}:
				default:
					rec.add(sample{gen: name, window: w}) // dropped: counts as a failure
					continue
				}
				wg.Go(func() {
					defer func() { <-inFlight }()
					status, lat := fire(i)
					rec.add(sample{gen: name, window: w, latency: lat, status: status})
				})
			}
		})
	}
	always := func(string) bool { return true }
	local := clientFrom("")
	scoreBody := `{"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}`
	gen("scoring", rates.scoring, always, func(int) (int, time.Duration) {
		return do(local, base+"/api/score/items/idsWithResults/standard", "application/json", scoreBody, "Authorization", "Bearer "+scoringToken)
	})
	goodClient := clientFrom("127.0.0.2")
	gen("login", rates.logins, always, func(i int) (int, time.Duration) {
		c := goods[i%len(goods)]
		if i%2 == 1 { // half of them the OAuth 2.0 way
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.id}, "client_secret": {c.secret}}
			return do(goodClient, base+"/authToken", "application/x-www-form-urlencoded", form.Encode())
		}
		return do(goodClient, base+"/authToken", "application/json", loginBody(c.id, c.secret))
	})
	// Attackers: one keep-alive client per source address 127.0.1.1-250 (127.0.2.x for the argon2
	// target), so that the per-address buckets do not stop them: every guess reaches the hash.
	attackers := make([]*http.Client, 250)
	argonAttackers := make([]*http.Client, 250)
	for i := range attackers {
		attackers[i] = clientFrom(fmt.Sprintf("127.0.1.%d", i+1))
		argonAttackers[i] = clientFrom(fmt.Sprintf("127.0.2.%d", i+1))
	}
	gen("flood", rates.flood, func(w string) bool { return w == attack }, func(i int) (int, time.Duration) {
		id := fmt.Sprintf("no-such-client-%d", i) // unknown ids, every other guess
		if i%2 == 0 {
			id = targets[(i/2)%len(targets)].id
		}
		return do(attackers[i%len(attackers)], base+"/authToken", "application/json", loginBody(id, fmt.Sprintf("guess-%d", i)))
	})
	gen("flood-argon2", rates.flood, func(w string) bool { return w == attackArgon }, func(i int) (int, time.Duration) {
		return do(argonAttackers[i%len(argonAttackers)], base+"/authToken", "application/json", loginBody(argon.id, fmt.Sprintf("guess-%d", i)))
	})

	for _, w := range windows {
		current.Store(w.kind)
		select {
		case <-ctx.Done():
		case <-time.After(w.dur):
		}
	}
	cancel()
	wg.Wait()
	return rec.samples
}

// rates are requests per second of each generator.
type rates struct{ scoring, logins, flood int }
