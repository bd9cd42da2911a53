package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// Attacks 5, 8 and 9 are about memory: many large requests at once, on both fronts, and a login
// flood at a client whose secret is checked with argon2id (64 MiB a check).
const (
	forecastGroup = "/yardstick.forecast.v1.ForecastService/ForecastReadingGroup"

	// Attack 5a: groupConns connections × groupPerConn calls at once, each of groupStudents.
	groupConns    = 16
	groupPerConn  = 32
	groupStudents = 100000
	groupCallFor  = 25 * time.Second // a call's deadline: the attack's bound
	// Attack 5b: bigCalls calls at once of a message just under the forecast receive limit, over
	// bigConns connections.
	bigCalls = 40
	bigConns = 8
	bigFor   = 25 * time.Second
	// Attack 8: argonFlooders clients, each from its own address, failing logins for argonFor.
	argonFlooders = 64
	argonFor      = 15 * time.Second
	argonMaxEach  = 2000
	// Attack 9: compactClients clients post a compact-array group forecast of groupStudents at
	// once; refused ones wait their Retry-After and post again while there is time.
	compactClients = 64
	compactFor     = 25 * time.Second
)

// unanswered counts the calls the soak's deadline ended.
const unanswered = "unanswered by the deadline"

// rawCodec sends a message encoded once (the 2.9 MB group request is not re-encoded for each of
// 512 calls) and reads an answer only for its size.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*int) = len(data)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// groupMessage is a protobuf GroupForecastRequest of n students.
func groupMessage(n int) ([]byte, error) {
	req := &forecastv1.GroupForecastRequest{TestUncertainty: ptr(30.0), CutLevels: []float64{400, 600, 800}}
	req.StudentData = make([]*forecastv1.StudentData, n)
	for i := range n {
		req.StudentData[i] = &forecastv1.StudentData{PriorAbility: ptr(float64(200 + i%900)), PriorUncertainty: ptr(float64(40 + i%50)), ElapsedDays: ptr(float64(i % 365))}
	}
	return proto.Marshal(req)
}

// answerRetry is answer (code and ErrorInfo reason) with " +RetryInfo" when the status has one.
func answerRetry(err error) string {
	a := answer(err)
	for _, d := range status.Convert(err).Details() {
		if _, ok := d.(*errdetails.RetryInfo); ok {
			return a + " +RetryInfo"
		}
	}
	return a
}

// grpcCalls makes calls of method with msg at once, spread over conns connections, each with a
// deadline of d, and counts the answers.
func grpcCalls(ctx context.Context, addr, tok, method string, msg []byte, conns, calls int, d time.Duration) (tally, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	clients := make([]*grpc.ClientConn, conns)
	for i := range clients {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.ForceCodec(rawCodec{})))
		if err != nil {
			return nil, err
		}
		defer c.Close()
		clients[i] = c
	}
	var mu sync.Mutex
	t := tally{}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			var size int
			a := answerRetry(clients[i%conns].Invoke(ctx, method, &msg, &size))
			if ctx.Err() != nil {
				a = unanswered // the soak's deadline, not the server's answer
			}
			mu.Lock()
			t[a]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return t, nil
}

// warmGroup makes one small group call, so the idle figure includes what any call costs.
func warmGroup(ctx context.Context, addr, tok string) error {
	small, err := groupMessage(100)
	if err != nil {
		return err
	}
	t, err := grpcCalls(ctx, addr, tok, forecastGroup, small, 1, 1, 5*time.Second)
	if err != nil {
		return err
	}
	if t["OK"] != 1 {
		return fmt.Errorf("warm-up group call: %s", t)
	}
	return nil
}

// groupCalls is attack 5a: 16 connections × 32 concurrent 100,000-student group calls.
func groupCalls(ctx context.Context, e *attackEnv) (string, error) {
	msg, err := groupMessage(groupStudents)
	if err != nil {
		return "", err
	}
	p, err := startPod(ctx, e, e.forecast, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	tok, err := login(p.base, client{"demo", "demo-secret"})
	if err != nil {
		return "", err
	}
	if err := warmGroup(ctx, p.grpc, tok); err != nil {
		return "", err
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	start := time.Now()
	t, err := grpcCalls(ctx, p.grpc, tok, forecastGroup, msg, groupConns, groupConns*groupPerConn, groupCallFor)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(e.out, "%d calls of %.1f MB at once on %d connections, done in %.1f s: %s\n",
		groupConns*groupPerConn, float64(len(msg))/1e6, groupConns, time.Since(start).Seconds(), t)
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	invalid := 0
	for k, n := range t {
		if strings.HasPrefix(k, codes.InvalidArgument.String()) {
			invalid += n
		}
	}
	overloaded := codes.ResourceExhausted.String() + "/OVERLOADED +RetryInfo"
	others := 0
	for k, n := range t {
		if k != "OK" && k != overloaded && k != unanswered {
			others += n
		}
	}
	e.v.check(invalid == 0, "no refusal answered InvalidArgument (got %d)", invalid)
	e.v.check(others == 0, "every refusal is ResourceExhausted, ErrorInfo OVERLOADED, with RetryInfo (%d others)", others)
	e.v.check(t["OK"] > 0, "some calls answered OK within the budget (got %d)", t["OK"])
	return fmt.Sprintf("VmHWM %s; %d OK, %d overloaded, %d InvalidArgument, %d other, %d unanswered in %s", mib(peak), t["OK"], t[overloaded], invalid, others-invalid, t[unanswered], groupCallFor), nil
}

// bigMessages is attack 5b: 40 concurrent group calls with a token whose messages are just under
// the forecast service's receive limit (about 578,000 students: more than a group may have, so
// each is refused, but only once it is read).
func bigMessages(ctx context.Context, e *attackEnv) (string, error) {
	msg, err := groupMessage((grpcMessage - 64) / 29) // a student is 29 bytes of protobuf
	if err != nil {
		return "", err
	}
	if len(msg) > grpcMessage {
		return "", fmt.Errorf("the big message is %d bytes, over %d", len(msg), grpcMessage)
	}
	p, err := startPod(ctx, e, e.forecast, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	tok, err := login(p.base, client{"demo", "demo-secret"})
	if err != nil {
		return "", err
	}
	if err := warmGroup(ctx, p.grpc, tok); err != nil {
		return "", err
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	start := time.Now()
	t, err := grpcCalls(ctx, p.grpc, tok, forecastGroup, msg, bigConns, bigCalls, bigFor)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(e.out, "%d calls of %.2f MiB at once on %d connections, answered in %.1f s: %s\n",
		bigCalls, float64(len(msg))/(1<<20), bigConns, time.Since(start).Seconds(), t)
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("VmHWM %s; %s", mib(peak), t), nil
}

// argonFlood is attack 8: failed logins at the argon2id client from 64 addresses at once.
func argonFlood(ctx context.Context, e *attackEnv) (string, error) {
	dir, err := os.MkdirTemp("", "yardstick-soak-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	clientsFile, goods, _, argon, err := clients(dir, 1, 0)
	if err != nil {
		return "", err
	}
	p, err := startPod(ctx, e, e.scoring, clientsFile)
	if err != nil {
		return "", err
	}
	defer p.stop()
	if _, err := login(p.base, goods[0]); err != nil {
		return "", err
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	rec := &recorder{}
	end := time.Now().Add(argonFor)
	var wg sync.WaitGroup
	for i := range argonFlooders {
		wg.Go(func() {
			c := clientFrom(fmt.Sprintf("127.0.3.%d", i+1))
			for n := 0; n < argonMaxEach && time.Now().Before(end) && ctx.Err() == nil; n++ {
				status, lat := do(c, p.base+"/authToken", "application/json", loginBody(argon.id, fmt.Sprintf("guess-%d-%d", i, n)))
				rec.add(sample{latency: lat, status: status})
			}
		})
	}
	wg.Wait()
	fmt.Fprintf(e.out, "%d failed logins at the argon2id client from %d addresses in %s: statuses %s\n", len(rec.samples), argonFlooders, argonFor, statuses(rec.samples))
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("VmHWM %s; %d logins: %s", mib(peak), len(rec.samples), statuses(rec.samples)), nil
}

// compactRequest is a group forecast body of n students in the compact form, [ability,
// uncertainty, days] per student.
func compactRequest(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"testUncertainty":30,"cutLevels":[400,600,800],"studentData":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `[%d,%d,%d]`, 200+i%900, 40+i%50, i%365)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// compactGroups is attack 9: 64 clients post a 100,000-student compact-array group forecast at
// once; a refused client waits its Retry-After and posts again while there is time.
func compactGroups(ctx context.Context, e *attackEnv) (string, error) {
	p, err := startPod(ctx, e, e.forecast, "")
	if err != nil {
		return "", err
	}
	defer p.stop()
	tok, err := login(p.base, client{"demo", "demo-secret"})
	if err != nil {
		return "", err
	}
	if code, _, err := postCompact(ctx, p.base, tok, compactRequest(100)); err != nil || code != http.StatusOK {
		return "", fmt.Errorf("warm-up: status %d, %v", code, err)
	}
	if err := p.settle(); err != nil {
		return "", err
	}
	body := compactRequest(groupStudents)
	start := time.Now()
	end := start.Add(compactFor)
	ctx, cancel := context.WithDeadline(ctx, end.Add(5*time.Second))
	defer cancel()
	var mu sync.Mutex
	answers := tally{}
	retryAfter := tally{}
	done, unfinished := 0, 0
	var wg sync.WaitGroup
	for range compactClients {
		wg.Go(func() {
			for {
				code, ra, err := postCompact(ctx, p.base, tok, body)
				mu.Lock()
				switch {
				case err != nil && ctx.Err() != nil:
					unfinished++
				case err != nil:
					answers["error: "+err.Error()]++
				default:
					answers[strconv.Itoa(code)]++
				}
				if code == http.StatusServiceUnavailable {
					retryAfter[ra]++
				}
				if code == http.StatusOK {
					done++
				}
				mu.Unlock()
				secs, perr := strconv.Atoi(ra)
				if code != http.StatusServiceUnavailable || perr != nil || time.Now().Add(time.Duration(secs)*time.Second).After(end) {
					return
				}
				time.Sleep(time.Duration(max(secs, 1)) * time.Second)
			}
		})
	}
	wg.Wait()
	fmt.Fprintf(e.out, "%d clients × a %.1f MB compact-array body: %d answered 200 in %.1f s (%d cut by the soak's deadline); answers %s; Retry-After of the 503s %s\n",
		compactClients, float64(len(body))/1e6, done, time.Since(start).Seconds(), unfinished, answers, retryAfter)
	peak, err := p.checkPeak(e)
	if err != nil {
		return "", err
	}
	refusals, others := answers["503"], 0
	for k, n := range answers {
		if k != "200" && k != "503" {
			others += n
		}
	}
	goodRetry := 0
	for k, n := range retryAfter {
		if s, err := strconv.Atoi(k); err == nil && s >= 1 {
			goodRetry += n
		}
	}
	e.v.check(goodRetry == refusals, "every 503 carries a Retry-After of at least 1 s (%d of %d)", goodRetry, refusals)
	e.v.check(others == 0, "no answer but 200 and 503 (got %d others)", others)
	return fmt.Sprintf("VmHWM %s; %d of %d answered 200, %d refusals 503, %d other", mib(peak), done, compactClients, refusals, others), nil
}

// postCompact posts a group forecast body on a connection of its own, bounded by ctx, and returns
// the status and Retry-After.
func postCompact(ctx context.Context, base, tok string, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/forecast/reading/group", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), err
}
