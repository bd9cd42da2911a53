package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Attack 6, a named pipe at the clients path: the reload thread once blocked forever in open()
// on it, so a client removed from the file afterwards kept its access and nothing was logged.
// The binary reloads every second from a clients file of three clients; one of them logs in,
// the file is swapped for a named pipe nobody writes to for 3 s, then a file without that client
// is renamed into place. Its token and its logins must be refused within one reload interval
// and a margin, while the service stays ready and keeps answering the other two.
const (
	reloadEvery   = time.Second
	pipeFor       = 3 * time.Second
	removalWithin = reloadEvery + 1500*time.Millisecond
	removalGiveUp = 5 * time.Second        // how long the soak looks for the removal at most
	watchEvery    = 100 * time.Millisecond // the other clients' calls and the readiness checks
	removalPoll   = 50 * time.Millisecond  // the removed client's token and login
	pipeSubstring = "is a named pipe"
)

// registered is a client the soak writes into a clients file of its own (fast hashes only: an
// argon2id client would make the junk of attack 7 wait for hashing slots).
type registered struct {
	client
	hash string
}

func newClients(ids ...string) ([]registered, error) {
	out := make([]registered, len(ids))
	for i, id := range ids {
		secret, hash, err := token.GenerateSecret()
		if err != nil {
			return nil, err
		}
		out[i] = registered{client{id, secret}, hash}
	}
	return out, nil
}

// writeClients puts a clients file of cs at path the way a deployment tool would: written beside
// it, then renamed into place.
func writeClients(path string, cs []registered) error {
	var b strings.Builder
	b.WriteString("clients:\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "  - clientId: %s\n    secretHash: %s\n    services: [scoring]\n    permissions: [\"*\"]\n", c.id, c.hash)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// scoreBody is a small scoring request, answered 200 with a valid token.
const scoreBody = `{"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}`

// score makes one scoring call with tok and returns its status (0: no answer).
func score(c *http.Client, base, tok string) int {
	status, _ := do(c, base+"/api/score/items/idsWithResults/standard", "application/json", scoreBody, "Authorization", "Bearer "+tok)
	return status
}

// loginStatus is the status of a JSON login of c.
func loginStatus(hc *http.Client, base string, c client) int {
	status, _ := do(hc, base+"/authToken", "application/json", loginBody(c.id, c.secret))
	return status
}

// ready is the status of GET /readyz (0: no answer).
func ready(c *http.Client, base string) int {
	resp, err := c.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func fifoAtClients(ctx context.Context, e *attackEnv) (string, error) {
	dir, err := os.MkdirTemp("", "yardstick-soak-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cs, err := newClients("stays-0", "stays-1", "removed")
	if err != nil {
		return "", err
	}
	stays, removed := cs[:2], cs[2].client
	path := filepath.Join(dir, "clients.yaml")
	if err := writeClients(path, cs); err != nil {
		return "", err
	}
	p, err := startPod(ctx, e, e.scoring, path, "YARDSTICK_RELOAD_INTERVAL="+reloadEvery.String())
	if err != nil {
		return "", err
	}
	defer p.stop()
	p.logs.keepLines(pipeSubstring)
	tokA, err := login(p.base, removed)
	if err != nil {
		return "", err
	}
	tokB, err := login(p.base, stays[0].client)
	if err != nil {
		return "", err
	}
	hc := clientFrom("")
	if s := score(hc, p.base, tokA); s != http.StatusOK {
		return "", fmt.Errorf("the client to be removed: scoring answered %d before the attack; want 200", s)
	}

	// The other clients and the kubelet, every 100 ms from now to the end.
	w := watchOthers(ctx, p.base, tokB, stays)
	// The pipe, made beside the file and renamed over it, so the path is never missing.
	fifo := filepath.Join(dir, "clients.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return "", fmt.Errorf("mkfifo: %w", err)
	}
	if err := os.Rename(fifo, path); err != nil {
		return "", err
	}
	piped := tally{} // the removed client's token while the pipe is there (it is still registered)
	for end := time.Now().Add(pipeFor); time.Now().Before(end) && ctx.Err() == nil; {
		piped[fmt.Sprint(score(hc, p.base, tokA))]++
		time.Sleep(250 * time.Millisecond)
	}
	if err := writeClients(path, stays); err != nil {
		return "", err
	}
	tokenRefused, loginRefused := awaitRemoval(ctx, hc, p.base, tokA, removed)
	time.Sleep(time.Second) // the others keep being watched a while after the removal
	readiness, others, logins := w.end()

	fmt.Fprintf(e.out, "clients file of 3, reloaded every %s; a named pipe at its path for %s (the removed client's token meanwhile: %s), then a file without that client\n",
		reloadEvery, pipeFor, piped)
	kept := p.logs.keptLines()
	for _, l := range kept[:min(len(kept), 2)] {
		fmt.Fprintf(e.out, "log: %s\n", l)
	}
	fmt.Fprintf(e.out, "the other clients every %s: readiness %s; scoring %s; logins %s\n", watchEvery, readiness, others, logins)
	e.v.check(tokenRefused > 0 && tokenRefused <= removalWithin, "the removed client's token %s (target <= %s)", refusedAfter(tokenRefused), removalWithin)
	e.v.check(loginRefused > 0 && loginRefused <= removalWithin, "the removed client's login %s (target <= %s)", refusedAfter(loginRefused), removalWithin)
	e.v.check(readiness.total() > 0 && readiness["200"] == readiness.total(), "/readyz answered 200 throughout: %d of %d", readiness["200"], readiness.total())
	e.v.check(others.total() > 0 && others["200"] == others.total() && logins["200"] == logins.total(),
		"the other clients answered 200 throughout: scoring %d of %d, logins %d of %d", others["200"], others.total(), logins["200"], logins.total())
	e.v.check(len(kept) > 0, "the pipe was logged: %d line(s) say %q", len(kept), pipeSubstring)
	return fmt.Sprintf("removed client's token 401 after %s, login after %s (of the file back); ready %d/%d, others %d/%d; %d lines name the pipe",
		shortDuration(tokenRefused), shortDuration(loginRefused), readiness["200"], readiness.total(), others["200"]+logins["200"], others.total()+logins.total(), len(kept)), nil
}

// othersWatch calls as the other clients and the kubelet do, every watchEvery, until end.
type othersWatch struct {
	mu                        sync.Mutex
	readiness, others, logins tally
	stop                      chan struct{}
	wg                        sync.WaitGroup
}

// watchOthers starts the calls: /readyz, a scoring call with tok, a login of one of stays.
func watchOthers(ctx context.Context, base, tok string, stays []registered) *othersWatch {
	w := &othersWatch{readiness: tally{}, others: tally{}, logins: tally{}, stop: make(chan struct{})}
	w.wg.Go(func() {
		c := clientFrom("127.0.0.2")
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r, s, l := ready(c, base), score(c, base, tok), loginStatus(c, base, stays[i%2].client)
			w.mu.Lock()
			w.readiness[fmt.Sprint(r)]++
			w.others[fmt.Sprint(s)]++
			w.logins[fmt.Sprint(l)]++
			w.mu.Unlock()
		}
	})
	return w
}

// end stops the calls and returns their answers: readiness, scoring, logins.
func (w *othersWatch) end() (readiness, others, logins tally) {
	close(w.stop)
	w.wg.Wait()
	return w.readiness, w.others, w.logins
}

// awaitRemoval polls the removed client's token and login once the file without it is back, and
// returns how long after each was refused (0: not within removalGiveUp).
func awaitRemoval(ctx context.Context, hc *http.Client, base, tok string, removed client) (tokenRefused, loginRefused time.Duration) {
	back := time.Now()
	for time.Since(back) < removalGiveUp && (tokenRefused == 0 || loginRefused == 0) && ctx.Err() == nil {
		if tokenRefused == 0 && score(hc, base, tok) == http.StatusUnauthorized {
			tokenRefused = time.Since(back)
		}
		if loginRefused == 0 && loginStatus(hc, base, removed) == http.StatusUnauthorized {
			loginRefused = time.Since(back)
		}
		time.Sleep(removalPoll)
	}
	return tokenRefused, loginRefused
}

// refusedAfter says when a refusal was seen, d after the file was back (0: not seen).
func refusedAfter(d time.Duration) string {
	if d == 0 {
		return fmt.Sprintf("not refused within %s of the file being back", removalGiveUp)
	}
	return fmt.Sprintf("refused (401) %.2f s after the file was back", d.Seconds())
}

// shortDuration is d in seconds, or "never" for 0.
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
