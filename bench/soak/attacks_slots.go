package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// Attack 1, the slot hog: one unauthenticated connection opens a headers-only stream every
// 20 ms (HEADERS, never a message), which once held all four token-free slots so that 39 of 40
// readiness checks were refused. A kubelet meanwhile checks grpc.health.v1 every 500 ms on a
// fresh connection with a 2 s timeout, as Kubernetes' gRPC probe does; it targets the probe
// listener when the binary has one (-kubelet-on-main: the main port regardless). The attacker
// hits the main gRPC port and the probe port alike.
const (
	healthCheck    = "/grpc.health.v1.Health/Check"
	issueToken     = "/yardstick.auth.v1.TokenService/IssueToken"
	slotHogFor     = 16 * time.Second
	slotHogEvery   = 20 * time.Millisecond
	kubeletEvery   = 500 * time.Millisecond
	kubeletTimeout = 2 * time.Second
	// attackerFrom is the attackers' source address: another host on the pod network.
	attackerFrom = "127.0.0.2"
)

func slotHog(ctx context.Context, e *attackEnv, method string) (string, error) {
	p, err := startPod(ctx, e, e.scoring, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	kubelet := p.grpc
	if p.probe != "" && !e.kubeletOnMain {
		kubelet = p.probe
	}
	targets := []string{p.grpc}
	if p.probe != "" {
		targets = append(targets, p.probe)
	}

	end := time.Now().Add(slotHogFor)
	st := newH2Stats(true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, addr := range targets {
		wg.Go(func() { hog(ctx, addr, method, end, stop, st) })
	}
	// The kubelet's checks, and a client's logins on a fresh connection each at the same pace.
	health := checks(ctx, end, func(ctx context.Context) string { return probe(ctx, kubelet) })
	logins := checks(ctx, end, func(ctx context.Context) string { return loginCall(ctx, p.grpc) })
	readiness, loggedIn := <-health, <-logins
	oldest, stillOpen := st.oldestOpen()
	close(stop)
	wg.Wait()

	st.mu.Lock()
	defer st.mu.Unlock()
	where := "the main gRPC port (no probe listener)"
	if kubelet != p.grpc {
		where = "the probe listener " + kubelet
	} else if p.probe != "" {
		where = "the main gRPC port (-kubelet-on-main)"
	}
	fmt.Fprintf(e.out, "kubelet on %s; attacker from %s on %d port(s): %d streams opened on %d connections; the server ended them: %s; goaways: %s\n",
		where, attackerFrom, len(targets), st.opened, st.dials, st.ends, st.goaways)
	fmt.Fprintf(e.out, "at the end %d attacker streams were open, the oldest for %.1f s; longest a stream stayed open before the server ended it: %.1f s\n",
		stillOpen, oldest.Seconds(), longest(st.endedIn).Seconds())
	fmt.Fprintf(e.out, "kubelet health checks: %s; gRPC logins (IssueToken, fresh connection, every %s): %s\n", readiness, kubeletEvery, loggedIn)
	n, ok := readiness.total(), readiness["SERVING"]
	frac := float64(ok) / float64(max(n, 1))
	e.v.check(n > 0 && frac >= minReadiness, "readiness answered SERVING: %d of %d = %.0f%% (target >= %.0f%%)", ok, n, 100*frac, 100*minReadiness)
	return fmt.Sprintf("readiness %d/%d SERVING; logins %d/%d OK (info); %d attacker streams, longest held %.1f s",
		ok, n, loggedIn["OK"], loggedIn.total(), st.opened, max(longest(st.endedIn), oldest).Seconds()), nil
}

// checks calls check every kubeletEvery until end, each on its own with a deadline of
// kubeletTimeout, and sends the tally of its answers when the last is in.
func checks(ctx context.Context, end time.Time, check func(context.Context) string) <-chan tally {
	result := make(chan tally, 1)
	go func() {
		var mu sync.Mutex
		t := tally{}
		var wg sync.WaitGroup
		tick := time.NewTicker(kubeletEvery)
		defer tick.Stop()
		for time.Now().Before(end) && ctx.Err() == nil {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, kubeletTimeout)
				defer cancel()
				a := check(ctx)
				mu.Lock()
				t[a]++
				mu.Unlock()
			})
			<-tick.C
		}
		wg.Wait()
		result <- t
	}()
	return result
}

func (t tally) total() int {
	n := 0
	for _, v := range t {
		n += v
	}
	return n
}

// hog opens a headers-only stream to method on addr every slotHogEvery until end, on one
// connection, dialling again when the server closes it; it closes its connection once stop is
// closed (so that what is still open at the end can be seen).
func hog(ctx context.Context, addr, method string, end time.Time, stop <-chan struct{}, st *h2stats) {
	t := time.NewTicker(slotHogEvery)
	defer t.Stop()
	var c *h2conn
	defer func() {
		<-stop
		if c != nil {
			c.close()
		}
	}()
	for time.Now().Before(end) && ctx.Err() == nil {
		if c == nil {
			var err error
			if c, err = dialH2(ctx, attackerFrom, addr, end.Add(2*kubeletTimeout), st); err != nil {
				c = nil
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		select {
		case <-c.done:
			c.close()
			c = nil
			continue
		default:
		}
		if c.open(grpcHeaders(addr, method, ""), false) != nil || c.flush() != nil {
			c.close()
			c = nil
		}
		<-t.C
	}
}

// probe is one kubelet check: a fresh connection, grpc.health.v1 Check of the server as a whole.
// It returns "SERVING" or what came instead.
func probe(ctx context.Context, addr string) string {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return answer(err)
	}
	return resp.GetStatus().String()
}

// loginCall is a client's gRPC login on a fresh connection; it returns "OK" or the answer's code.
func loginCall(ctx context.Context, addr string) string {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	_, err = authv1.NewTokenServiceClient(conn).IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")})
	return answer(err)
}

func longest(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}
