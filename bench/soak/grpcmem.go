package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
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

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// The gRPC memory scenario (`make soak-grpc`): issue 10's attack on the built forecast binary.
// Before the gRPC guard, 20 concurrent token-less 16 MiB calls took its peak RSS from 21 MiB to
// 861 MiB, because every message was read and decoded before its token was looked at.
const (
	grpcCallers = 20
	grpcRounds  = 5
	// grpcMessage is just under the forecast service's receive limit (2,965,536 bytes: what
	// 100,000 students fill in protobuf, the forecast service's group message limit), so gRPC does not
	// refuse it on its length prefix: only the guard stands between it and the server's memory.
	grpcMessage = 2965536 - 64
	// Bounds on the growth of the server's peak RSS (VmHWM) over its idle value.
	// Token-less calls to a method that needs a token are refused on their headers: nothing of
	// their messages is held.
	maxGrowthRefused = 16 << 20
	// IssueToken needs no token, so its messages are read, at most maxLoginReads (4, pkg/serve)
	// at a time: 4 × 3 MiB, plus 32 MiB for the heap's own slack.
	maxGrowthLogins = 4*3<<20 + 32<<20
)

// grpcMemory runs the scenario and returns the exit status: 0 when every bound holds.
func grpcMemory(bin string, out io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := startServer(ctx, bin, "", false)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	conn, err := grpc.NewClient(srv.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	pid := srv.Pid()

	// Settle: one login and one refused call, so the idle figure includes what any call costs.
	login := authv1.NewTokenServiceClient(conn)
	if _, err := login.IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}); err != nil {
		return 0, fmt.Errorf("settling login: %w", err)
	}
	idle, err := vmHWM(pid)
	if err != nil {
		return 0, err
	}

	group := &forecastv1.GroupForecastRequest{CutLevels: make([]float64, (grpcMessage-8)/8)}
	forecast := forecastv1.NewForecastServiceClient(conn)
	noToken := ctx
	badToken := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer not.a.jwt")
	refused := flood(grpcCallers, grpcRounds, func(i int) error {
		c := noToken
		if i%2 == 1 {
			c = badToken
		}
		_, err := forecast.ForecastReadingGroup(c, group)
		return err
	})
	afterRefused, err := vmHWM(pid)
	if err != nil {
		return 0, err
	}

	secret := strings.Repeat("x", grpcMessage-16)
	logins := flood(grpcCallers, grpcRounds, func(int) error {
		_, err := login.IssueToken(ctx, &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: &secret})
		return err
	})
	afterLogins, err := vmHWM(pid)
	if err != nil {
		return 0, err
	}

	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(out, "gRPC memory soak: %s, %d concurrent callers × %d rounds, %s messages\n\n", bin, grpcCallers, grpcRounds, mib(grpcMessage))
	fmt.Fprintf(out, "%-58s %12s   %s\n", "", "peak RSS", "answers")
	fmt.Fprintf(out, "%-58s %12s\n", "idle (after one login)", mib(idle))
	fmt.Fprintf(out, "%-58s %12s   %s\n", "after token-less / bad-token ForecastReadingGroup calls", mib(afterRefused), refused)
	fmt.Fprintf(out, "%-58s %12s   %s\n\n", "after IssueToken calls (no token needed; read, capped)", mib(afterLogins), logins)

	v := verdicts{out: out}
	check := v.check
	check(refused.only(codes.Unauthenticated), "every token-less or bad-token call answered Unauthenticated")
	check(afterRefused-idle <= maxGrowthRefused, "peak RSS growth from refused calls: %s (bound %s)", mib(afterRefused-idle), mib(maxGrowthRefused))
	check(logins.only(codes.ResourceExhausted, "REQUEST_TOO_LARGE", "THROTTLED"), "every 3 MiB IssueToken call answered ResourceExhausted: over its 64 KiB limit once read, or refused unread over the cap")
	check(afterLogins-idle <= maxGrowthLogins, "peak RSS growth from 3 MiB IssueToken calls: %s (bound %s)", mib(afterLogins-idle), mib(maxGrowthLogins))
	return v.exitCode(), nil
}

// tally counts answers by status code and ErrorInfo reason ("ResourceExhausted/THROTTLED").
type tally map[string]int

func answer(err error) string {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code().String() + "/" + info.GetReason()
		}
	}
	return st.Code().String()
}

// only reports whether every answer had code c, and some had each of the reasons.
func (t tally) only(c codes.Code, reasons ...string) bool {
	for k := range t {
		if code, _, _ := strings.Cut(k, "/"); code != c.String() {
			return false
		}
	}
	for _, r := range reasons {
		if t[c.String()+"/"+r] == 0 {
			return false
		}
	}
	return len(t) > 0
}

func (t tally) String() string {
	keys := slices.Sorted(maps.Keys(t))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, t[k])
	}
	return strings.Join(parts, " ")
}

// flood runs call from callers goroutines at once, rounds times each, and counts the answers.
func flood(callers, rounds int, call func(i int) error) tally {
	var mu sync.Mutex
	t := tally{}
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for range rounds {
				a := answer(call(i))
				mu.Lock()
				t[a]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return t
}

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak RSS: %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("peak RSS: no VmHWM in /proc/%d/status", pid)
}

func ptr[T any](v T) *T { return &v }
