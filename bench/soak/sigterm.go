package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The SIGTERM scenario (`make soak-sigterm`): issue 19's attack 10 on the built scoring binary.
// After SIGTERM the service keeps accepting for its drain delay; connections opened then, whose
// first request comes 0.1 s after the listener closed, got EOF (5/5 and 10/10): net/http drops a
// request it reads once Shutdown has begun. Each round starts the binary, sends SIGTERM, opens
// sigtermConns connections during the delay, waits until the listener refuses connections, then
// 0.1 s later sends one scoring request on each and reads the answer.
const (
	sigtermRounds = 3
	sigtermConns  = 10
	// sigtermDelay is the binary's YARDSTICK_SHUTDOWN_DELAY: connections are opened a third of
	// the way into it.
	sigtermDelay = time.Second
	// sigtermLate is how long after the listener closed the requests are sent.
	sigtermLate = 100 * time.Millisecond
)

// sigtermRound is what one round saw.
type sigtermRound struct {
	answered, eof, other int           // 200 with Connection: close; no answer; anything else
	closedAfter          time.Duration // listener closed, after SIGTERM
	exitAfter            time.Duration // process exited, after SIGTERM
	exitErr              error
}

// soakSigterm runs the rounds and returns the exit status: 0 when every request was answered.
func soakSigterm(bin string, out io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pin := os.Getenv("SOAK_PINNED") != ""
	var rounds []sigtermRound
	for range sigtermRounds {
		r, err := sigtermOnce(ctx, bin, pin)
		if err != nil {
			return 0, err
		}
		rounds = append(rounds, r)
	}

	fmt.Fprintf(out, "SIGTERM soak: scoring binary, drain delay %s; %d rounds × %d connections opened %s after SIGTERM, each sending its first request %s after the listener closed\n\n",
		sigtermDelay, sigtermRounds, sigtermConns, sigtermDelay/3, sigtermLate)
	fmt.Fprintf(out, "%-6s %14s %14s %9s %6s %6s %s\n", "round", "listener shut", "process exit", "answered", "EOF", "other", "exit status")
	var answered, eof, other, badExits int
	for i, r := range rounds {
		status := "0"
		if r.exitErr != nil {
			status, badExits = r.exitErr.Error(), badExits+1
		}
		fmt.Fprintf(out, "%-6d %14s %14s %9d %6d %6d %s\n", i+1, ms(r.closedAfter), ms(r.exitAfter), r.answered, r.eof, r.other, status)
		answered, eof, other = answered+r.answered, eof+r.eof, other+r.other
	}
	fmt.Fprintln(out)
	v := verdicts{out: out}
	total := sigtermRounds * sigtermConns
	v.check(eof == 0, "connections that got EOF instead of an answer: %d of %d (target 0)", eof, total)
	v.check(answered == total, "answered 200 with Connection: close: %d of %d", answered, total)
	v.check(badExits == 0, "the process exited 0 after every drain (%d did not)", badExits)
	return v.exitCode(), nil
}

// sigtermOnce is one round against a fresh process.
func sigtermOnce(ctx context.Context, bin string, pin bool) (sigtermRound, error) {
	var r sigtermRound
	srv, err := startServer(ctx, bin, "", pin, "YARDSTICK_SHUTDOWN_DELAY="+sigtermDelay.String())
	if err != nil {
		return r, err
	}
	defer func() { _ = srv.Stop(0) }() // killed at once unless it has exited
	tok, err := login(srv.base, client{"demo", "demo-secret"})
	if err != nil {
		return r, err
	}
	addr := strings.TrimPrefix(srv.base, "http://")

	sigterm := time.Now()
	if err := srv.Signal(syscall.SIGTERM); err != nil {
		return r, err
	}
	time.Sleep(sigtermDelay / 3)
	conns := make([]net.Conn, sigtermConns)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return r, fmt.Errorf("dial during the drain delay: %w", err)
		}
		defer c.Close()
		conns[i] = c
	}
	closed, err := untilRefused(addr, sigtermDelay+5*time.Second)
	if err != nil {
		return r, err
	}
	r.closedAfter = closed.Sub(sigterm)
	time.Sleep(sigtermLate)

	body := `{"items":[{"id":"L000001","result":1},{"id":"L000002","result":0}]}`
	req := fmt.Sprintf("POST /api/score/items/idsWithResults/standard HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, tok, len(body), body)
	outcomes := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { outcomes[i] = askClosing(c, req) })
	}
	wg.Wait()
	for i, err := range outcomes {
		switch {
		case err == nil:
			r.answered++
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
			r.eof++
			fmt.Fprintf(os.Stderr, "connection %d: %v\n", i, err)
		default:
			r.other++
			fmt.Fprintf(os.Stderr, "connection %d: %v\n", i, err)
		}
	}
	select {
	case <-srv.Exited():
		r.exitErr, r.exitAfter = srv.ExitErr(), time.Since(sigterm)
	case <-time.After(30 * time.Second):
		return r, errors.New("the process did not exit within 30 s of the requests")
	}
	return r, nil
}

// untilRefused dials addr until the connection is refused or reset (the listener has closed) and returns
// that moment. A probe that connects is closed at once, as a TCP health check's would be.
func untilRefused(addr string, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			// Refused, or reset: a dial that lands in the backlog as the listener closes is reset,
			// not refused (the drain test's probe learnt the same).
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
				return time.Now(), nil
			}
			return time.Time{}, fmt.Errorf("probe: %w", err)
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("the listener did not close within %s", within)
}

// askClosing sends req on c and reads one answer, which must be 200 with Connection: close.
func askClosing(c net.Conn, req string) error {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("read the body: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !resp.Close {
		return fmt.Errorf("got %d, Connection: close %v; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	return nil
}
