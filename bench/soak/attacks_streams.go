package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2/hpack"
)

// Attacks 2-4 work on HTTP/2 frames: streams reset as soon as opened, streams that never send
// their message, header lists far beyond any real call's.
const (
	scoreBayes = "/yardstick.scoring.v1.ScoringService/ScoreItemResultsBayes"

	// Attack 2: 4 connections, as fast as the server takes them, for resetFor; a JSON client
	// meanwhile scores at jsonRate (after a quiet stretch of quietFor at the same rate).
	resetConns    = 4
	resetFor      = 20 * time.Second
	resetBatch    = 64       // streams written before a flush
	resetMaxPerCn = 10000000 // a bound on streams per connection besides the time
	jsonRate      = 20
	quietFor      = 3 * time.Second

	// Attack 3: idleConns × idlePerConn streams opened at once, watched for idleFor.
	idleConns   = 4
	idlePerConn = 25000
	idleBatch   = 100
	idleFor     = 20 * time.Second
	// idleCutBy is how soon a stream whose message never comes should be cut: the read deadline of
	// token-free calls (tokenlessReadTimeout, pkg/serve/grpcguard.go, 10 s) and 2 s of slack.
	idleCutBy = 12 * time.Second

	// Attack 4: hugeConns connections each send a hugeList-byte header list (decoded size),
	// again while there is time (at most hugeRounds each), no token.
	hugeConns  = 48
	hugeList   = 12_000_000
	hugeFor    = 15 * time.Second
	hugeRounds = 6
	hugeWait   = 3 * time.Second // for the server's answer to one list
)

// jsonAccessLine is the cause (logCause) of the line the server logs for each JSON request.
const jsonAccessLine = `INFO "http request"`

const scoringJSONBody = `{"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}`

// rapidReset is attack 2: HEADERS of a scoring call with a valid token, followed at once by
// RST_STREAM(CANCEL), on 4 connections, while a JSON client scores 20 times a second.
func rapidReset(ctx context.Context, e *attackEnv) (string, error) {
	p, err := startPod(ctx, e, e.scoring, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	tok, err := login(p.base, client{"demo", "demo-secret"})
	if err != nil {
		return "", err
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	json := clientFrom("")
	score := func() sample {
		status, lat := do(json, p.base+"/api/score/items/idsWithResults/standard", "application/json", scoringJSONBody, "Authorization", "Bearer "+tok)
		if status != http.StatusOK {
			lat = max(lat, 5*time.Second) // a failed answer counts as the slowest
		}
		return sample{gen: "scoring", latency: lat, status: status}
	}
	quiet := paced(ctx, jsonRate, quietFor, score)

	stopWatch := p.watch(ctx)
	bytes0, lines0 := p.logs.mark()
	start := time.Now()
	end := start.Add(resetFor)
	st := newH2Stats(false)
	var wg sync.WaitGroup
	for i := range resetConns {
		wg.Go(func() {
			from := fmt.Sprintf("127.0.0.%d", 2+i)
			var c *h2conn
			for n := 0; n < resetMaxPerCn && time.Now().Before(end) && ctx.Err() == nil; {
				if c == nil {
					var err error
					if c, err = dialH2(ctx, from, p.grpc, end, st); err != nil {
						c = nil
						time.Sleep(50 * time.Millisecond)
						continue
					}
				}
				var werr error
				for range resetBatch {
					if werr = c.open(grpcHeaders(p.grpc, scoreBayes, tok), true); werr != nil {
						break
					}
					n++
				}
				if werr != nil || c.flush() != nil {
					c.close()
					c = nil
				}
				// The attackers share the load's CPU with the JSON client: yielding after each
				// batch keeps the client's latency the server's, not the attackers' time slices.
				runtime.Gosched()
			}
			if c != nil {
				c.close()
			}
		})
	}
	attacked := paced(ctx, jsonRate, resetFor, score)
	wg.Wait()
	took := time.Since(start)
	causes := p.logs.top(3)
	own := p.logs.count(jsonAccessLine) // the JSON client's own requests, one line each
	bytes1, lines1 := p.logs.mark()
	most := stopWatch()

	qp99, ap99 := percentile(quiet, 0.99), percentile(attacked, 0.99)
	perSec := float64(lines1-lines0-own) / took.Seconds()
	st.mu.Lock()
	fmt.Fprintf(e.out, "%d streams opened and reset on %d connections in %.1f s (%.0f/s); the server ended streams: %s; goaways: %s; peak goroutines %d\n",
		st.opened, st.dials, took.Seconds(), float64(st.opened)/took.Seconds(), st.ends, st.goaways, most)
	st.mu.Unlock()
	fmt.Fprintf(e.out, "JSON scoring at %d/s: quiet p99 %s (%d, non-200 %d); under attack p50 %s p99 %s (%d, non-200 %d)\n",
		jsonRate, ms(qp99), len(quiet), non200(quiet), ms(percentile(attacked, 0.5)), ms(ap99), len(attacked), non200(attacked))
	fmt.Fprintf(e.out, "server log during the attack: %.1f MB, %d lines, %d of them the JSON client's requests; the others %.0f lines/s; most: %s\n",
		float64(bytes1-bytes0)/1e6, lines1-lines0, own, perSec, causes)
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	e.v.check(len(attacked) > 0 && ap99 <= maxResetJSONP99, "JSON scoring p99 under the rapid reset %s (target <= %s)", ms(ap99), ms(maxResetJSONP99))
	e.v.check(perSec <= maxLogLinesPerSec, "server log lines during the attack, but the JSON client's: %.0f/s (target <= %d/s)", perSec, maxLogLinesPerSec)
	return fmt.Sprintf("VmHWM %s; JSON p99 %s (quiet %s); %.0f resets/s; log %.0f lines/s, %.0f MB", mib(peak), ms(ap99), ms(qp99),
		float64(st.opened)/took.Seconds(), perSec, float64(bytes1-bytes0)/1e6), nil
}

// paced calls f rate times a second for d (each call in its own goroutine, at most 256 at once)
// and returns what they measured.
func paced(ctx context.Context, rate int, d time.Duration, f func() sample) []sample {
	rec := &recorder{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, 256)
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	for end := time.Now().Add(d); time.Now().Before(end) && ctx.Err() == nil; <-t.C {
		select {
		case slots <- struct{}{}:
			wg.Go(func() {
				defer func() { <-slots }()
				rec.add(f())
			})
		default:
			rec.add(sample{latency: 5 * time.Second}) // not even sent: as failed
		}
	}
	wg.Wait()
	return rec.samples
}

// idleStreams is attack 3: 4 connections each open 25,000 streams with a valid token and send no
// message; the server should refuse what it will not hold and cut what it accepted by the read
// deadline.
func idleStreams(ctx context.Context, e *attackEnv) (string, error) {
	p, err := startPod(ctx, e, e.scoring, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	tok, err := login(p.base, client{"demo", "demo-secret"})
	if err != nil {
		return "", err
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	stopWatch := p.watch(ctx)
	start := time.Now()
	end := start.Add(idleFor)
	st := newH2Stats(true)
	conns := make([]*h2conn, idleConns)
	var openedIn time.Duration
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c, err := dialH2(ctx, fmt.Sprintf("127.0.0.%d", 2+i), p.grpc, end.Add(time.Second), st)
			if err != nil {
				return
			}
			conns[i] = c
			for n := 0; n < idlePerConn && time.Now().Before(end); n += idleBatch {
				for range idleBatch {
					if c.open(grpcHeaders(p.grpc, scoreBayes, tok), false) != nil {
						return
					}
				}
				if c.flush() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	openedIn = time.Since(start)
	select {
	case <-time.After(time.Until(end)):
	case <-ctx.Done():
	}
	oldest, stillOpen := st.oldestOpen()
	most := stopWatch()
	peak, err := p.peak()
	if err != nil {
		return "", err
	}
	st.mu.Lock()
	opened, refused, ends, goaways := st.opened, st.refused, st.ends.String(), st.goaways.String()
	endedIn := slices.Clone(st.endedIn)
	st.mu.Unlock()
	for _, c := range conns {
		if c != nil {
			c.close()
		}
	}
	accepted := opened - refused
	cutInTime := 0
	for _, d := range endedIn {
		if d <= idleCutBy {
			cutInTime++
		}
	}
	slices.Sort(endedIn)
	q := func(p float64) time.Duration {
		if len(endedIn) == 0 {
			return 0
		}
		return endedIn[min(int(p*float64(len(endedIn))), len(endedIn)-1)]
	}
	fmt.Fprintf(e.out, "%d streams opened in %.1f s on %d connections; %d refused (REFUSED_STREAM), %d accepted; the server ended them: %s; goaways: %s; peak goroutines %d\n",
		opened, openedIn.Seconds(), idleConns, refused, accepted, ends, goaways, most)
	fmt.Fprintf(e.out, "accepted streams ended by the server after p50 %.1f s, max %.1f s; %d of %d within %s; after %s, %d still open (oldest %.1f s)\n",
		q(0.5).Seconds(), q(1).Seconds(), cutInTime, accepted, idleCutBy, idleFor, stillOpen, oldest.Seconds())
	e.v.check(peak <= maxAttackVmHWM, "peak VmHWM %s (idle %s; target <= %s)", mib(peak), mib(p.idle), mib(maxAttackVmHWM))
	return fmt.Sprintf("VmHWM %s; %d refused, %d accepted, %d cut within %s, %d open after %s", mib(peak), refused, accepted, cutInTime, idleCutBy, stillOpen, idleFor), nil
}

// hugeHeaders is attack 4: 48 connections, no token, each sending one header list of 12 MB
// (HEADERS and CONTINUATION frames), again while there is time.
func hugeHeaders(ctx context.Context, e *attackEnv) (string, error) {
	p, err := startPod(ctx, e, e.scoring, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	if err := p.settle(); err != nil {
		return "", err
	}
	block := hugeBlock(p.grpc)
	stopWatch := p.watch(ctx)
	end := time.Now().Add(hugeFor)
	st := newH2Stats(false)
	var mu sync.Mutex
	sent, cut := 0, 0
	var wg sync.WaitGroup
	for i := range hugeConns {
		wg.Go(func() {
			for round := 0; round < hugeRounds && time.Now().Before(end) && ctx.Err() == nil; round++ {
				c, err := dialH2(ctx, fmt.Sprintf("127.0.0.%d", 2+i%8), p.grpc, end.Add(hugeWait), st)
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				err = c.openBlock(block)
				mu.Lock()
				if err != nil {
					cut++
					if os.Getenv("SOAK_DEBUG") != "" {
						fmt.Fprintln(os.Stderr, "attack 4: cut off while sending:", err)
					}
				} else {
					sent++
				}
				mu.Unlock()
				select {
				case <-c.done:
				case <-time.After(hugeWait):
				}
				c.close()
			}
		})
	}
	wg.Wait()
	most := stopWatch()
	st.mu.Lock()
	fmt.Fprintf(e.out, "%d header lists of %.0f MB (%.1f MB on the wire) sent whole, %d cut off while sending, on %d connections; the server ended streams: %s; goaways: %s; peak goroutines %d\n",
		sent, hugeList/1e6, float64(len(block))/1e6, cut, st.dials, st.ends, st.goaways, most)
	st.mu.Unlock()
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("VmHWM %s; %d lists sent whole, %d cut off", mib(peak), sent, cut), nil
}

// hugeBlock is the header block of a token-less scoring call padded with x-pad-N headers of
// 16,000 bytes until the list (name, value and 32 bytes a field, as HTTP/2 counts) reaches
// hugeList, encoded as the first block of a fresh connection. The values are not Huffman
// friendly, so the wire carries about what the server decodes.
func hugeBlock(authority string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	size := 0
	for _, f := range grpcHeaders(authority, "/yardstick.scoring.v1.ScoringService/ScoreItemResults", "") {
		_ = enc.WriteField(f)
		size += int(f.Size())
	}
	value := strings.Repeat("~{}|^`\\", 16000/7)
	for i := 0; size < hugeList; i++ {
		f := hpack.HeaderField{Name: fmt.Sprintf("x-pad-%d", i), Value: value, Sensitive: true}
		_ = enc.WriteField(f)
		size += int(f.Size())
	}
	return b.Bytes()
}
