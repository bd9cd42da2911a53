package grpcguard

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/internal/redistest"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestReadPool: a call with a token takes the most gRPC may read for it from the read pool
// before its message is read. With a pool of one read, held by a call whose message has not come,
// the next call waits 1 s and is answered ResourceExhausted, OVERLOADED, retry after 1 s; once the
// holder ends, calls are read again.
func TestReadPool(t *testing.T) {
	t.Parallel()
	// The pool's size and wait: admission's TestReadPoolSize.
	h := startGuard(t, func(g *Guard) { g.reads = admission.NewReadPool(0, g.routes.Ceiling) })
	authed := bearer("Bearer " + h.token)
	holdCtx, release := context.WithCancel(authed)
	defer release()
	if _, err := h.conn.NewStream(holdCtx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read pool held", func() bool {
		gone, cancel := context.WithCancel(context.Background())
		cancel() // Take does not wait: a byte is free now, or the pool is held
		if r, ok := h.g.reads.Take(gone, "probe", 0, 1); ok {
			r.Done()
			return false
		}
		return true
	})
	score := scoringv1.NewScoringServiceClient(h.conn)
	start := time.Now()
	_, err := score.ScoreItemResults(authed, scoreOfSize(t, 100))
	waited := time.Since(start)
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != rpcerr.ReasonOverloaded || retryOf(err) != time.Second {
		t.Fatalf("a call while the pool is held: got %v; want ResourceExhausted, reason %s, retry after 1 s", err, rpcerr.ReasonOverloaded)
	}
	if got := h.refusals("grpc", "read_pool"); got != 1 {
		t.Errorf("yardstick_admission_refusals_total{front=grpc,cause=read_pool}: got %v; want 1", got)
	}
	if waited < 900*time.Millisecond {
		t.Errorf("refused after %s; want after waiting the read wait (1 s)", waited)
	}
	waitFor(t, "the refusal logged", func() bool { return h.loggedAt(scoreMethod, "ResourceExhausted", "WARN") })
	release()
	waitFor(t, "a call read again", func() bool {
		_, err := score.ScoreItemResults(authed, scoreOfSize(t, 100))
		return status.Code(err) != codes.ResourceExhausted
	})
}

// TestReadPoolShareOfOneClient: 50 header-only calls of one client on one connection hold at most
// its share of the read pool (a quarter of it: 2 reads of 10); its calls past the share are
// refused after the read wait, and another client's call is read at once meanwhile. Once, they
// held the whole pool until the read timeout, and every other client's call was
// RESOURCE_EXHAUSTED.
func TestReadPoolShareOfOneClient(t *testing.T) {
	t.Parallel()
	var demo, other string
	h := startGuard(t, func(g *Guard) {
		g.reads = g.Gate.Budget.Report("grpc", admission.NewReadPool(40*g.routes.Ceiling, g.routes.Ceiling)) // 10 reads of the largest message
		demo, other = twoClients(t, g)
	})
	if got := h.g.reads.Size(); got != 10*h.g.routes.Ceiling {
		t.Fatalf("read pool %d; want 10 reads of %d", got, h.g.routes.Ceiling)
	}
	ctx, cancel := context.WithCancel(bearer("Bearer " + demo))
	defer cancel()
	refused := make(chan error, 50)
	for range 50 {
		cs, err := h.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod)
		if err != nil {
			t.Fatal(err)
		}
		go func() { refused <- cs.RecvMsg(&scoringv1.Measure{}) }()
	}
	share := float64(2 * h.g.routes.Ceiling)
	waitFor(t, "the client's share of the pool held", func() bool { return h.readsHeld(t) == share })
	start := time.Now()
	_, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(bearer("Bearer "+other), scoreOfSize(t, 100))
	if err != nil || time.Since(start) > 500*time.Millisecond {
		t.Errorf("another client's call beside them: got %v after %s; want it read and answered at once", err, time.Since(start))
	}
	for range 48 {
		select {
		case err := <-refused:
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("a header-only call past the client's share: got %v; want RESOURCE_EXHAUSTED", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the calls past the client's share were not refused after the read wait")
		}
	}
	if got := h.readsHeld(t); got != share {
		t.Errorf("held after the refusals (the other client's read long done): %v; want the client's two reads, %v", got, share)
	}
}

// TestRefusedReadGivesBackItsPlace: a call the gate admitted holds a place of its client's
// concurrency; when the read pool then refuses it, before any interceptor, the place is given
// back as its stream ends (else a client would lose a place for every such refusal).
func TestRefusedReadGivesBackItsPlace(t *testing.T) {
	t.Parallel()
	var limits *quota.Limiter
	h := startGuard(t, func(g *Guard) {
		g.reads = admission.NewReadPool(0, g.routes.Ceiling) // one read at a time
		var err error
		if limits, err = quota.New(quota.Config{Service: "forecast", Concurrency: 2}); err != nil {
			t.Fatal(err)
		}
		g.Gate.Limits = limits
	})
	authed := bearer("Bearer " + h.token)
	holdCtx, release := context.WithCancel(authed)
	defer release()
	// The holder: admitted (one place of two), then holding the one read while its message does
	// not come.
	if _, err := h.conn.NewStream(holdCtx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read pool held", func() bool {
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		if r, ok := h.g.reads.Take(gone, "probe", 0, 1); ok {
			r.Done()
			return false
		}
		return true
	})
	_, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(authed, scoreOfSize(t, 100))
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != rpcerr.ReasonOverloaded {
		t.Fatalf("a call while the read pool is held: got %v; want ResourceExhausted, reason %s", err, rpcerr.ReasonOverloaded)
	}
	waitFor(t, "the refused call's place given back", func() bool {
		slot, err := limits.Acquire("demo")
		slot.Done()
		return err == nil
	})
}

// TestReadTimeoutWithToken: a call with a token that never sends its message is ended after
// the read timeout (logged DeadlineExceeded); one that sends within it is answered.
func TestReadTimeoutWithToken(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(g *Guard) { g.ReadTimeout = timeout })
	ctx, cancel := context.WithTimeout(bearer("Bearer "+h.token), 10*time.Second)
	defer cancel()
	cs, err := h.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = cs.RecvMsg(&scoringv1.Measure{})
	if status.Code(err) != codes.Canceled || time.Since(start) > timeout+3*time.Second {
		t.Fatalf("headers only: got %v after %s; want Canceled within the read timeout and a sweep", err, time.Since(start))
	}
	waitFor(t, "the ended call logged", func() bool { return h.loggedAt(scoreMethod, "DeadlineExceeded", "WARN") })

	req := scoreOfSize(t, 100)
	slow, err := h.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(timeout / 3)
	if err := slow.SendMsg(req); err != nil {
		t.Fatal(err)
	}
	_ = slow.CloseSend()
	if err := slow.RecvMsg(&scoringv1.Measure{}); status.Code(err) == codes.Canceled {
		t.Errorf("a message sent within the read timeout: got %v; want the call answered", err)
	}
}

// TestRefusedGroupIsNotDecoded: a 100,000-student group call over gRPC that the budget cannot
// take is refused ResourceExhausted (OVERLOADED, retry after 1 s) without being decoded: the
// process allocates the message as the client marshals it and the server reads it (about 3 MB
// each), not what decoding it adds. Not parallel: it reads the process's allocation count.
func TestRefusedGroupIsNotDecoded(t *testing.T) {
	h := startGuard(t)
	full, fillErr := h.g.Gate.Budget.AdmitCall(context.Background(), "grpc", "", budgetBytes) // costs the whole budget
	if fillErr != nil {
		t.Fatal("could not fill the budget")
	}
	defer full.Release()
	req := &forecastv1.GroupForecastRequest{TestUncertainty: ptr(40.0), CutLevels: []float64{500, 700}}
	for range 100000 {
		req.StudentData = append(req.StudentData, &forecastv1.StudentData{PriorAbility: ptr(612.5), PriorUncertainty: ptr(51.25), ElapsedDays: ptr(180.5)})
	}
	client := forecastv1.NewForecastServiceClient(h.conn)
	authed := bearer("Bearer " + h.token)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := client.ForecastReadingGroup(authed, req)
	runtime.ReadMemStats(&after)
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != rpcerr.ReasonOverloaded || retryOf(err) != time.Second {
		t.Fatalf("got %v; want ResourceExhausted, reason %s, retry after 1 s", err, rpcerr.ReasonOverloaded)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 10<<20 {
		t.Errorf("allocated %d bytes to refuse it; want under 10 MiB (measured: 6.0 MB, the message marshalled and read; 20.3 MB when the codec decodes it first)", grew)
	}
	full.Release()
	if _, err := client.ForecastReadingGroup(authed, req); err != nil {
		t.Errorf("the same call with the budget free: %v", err)
	}
}

// TestReflectionGoesQuiet: a reflection stream that sends nothing for the read timeout is
// cut, and gives its slot back.
func TestReflectionGoesQuiet(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(g *Guard) { g.ReadTimeout = timeout })
	stream, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // each request within the timeout keeps it open
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("an active stream: %v", err)
		}
		time.Sleep(timeout / 2)
	}
	start := time.Now()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled || time.Since(start) > 3*time.Second {
		t.Fatalf("a quiet stream: got %v after %s; want Canceled within the read timeout", err, time.Since(start))
	}
	waitFor(t, "the slot back", func() bool { return h.infraSlots() == 0 })
}

// TestReflectionAbortIsNotAnError: a client that cuts its reflection stream off is a caller
// leaving, logged at INFO, not an error of ours.
func TestReflectionAbortIsNotAnError(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	const route = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	waitFor(t, "the aborted stream logged", func() bool { return strings.Contains(h.logs.String(), `"route":"`+route+`"`) })
	if !h.loggedAt(route, "Canceled", "INFO") {
		t.Errorf("an aborted reflection stream: want an INFO line with code Canceled; got:\n%s", h.logs)
	}
}

// TestSharedRateRefusedBeforeTheRead: with the rate shared through Redis (a real redis-server),
// the tap handle leaves it to the call's goroutine, which decides it before the read pool: a call
// over the rate is refused as on its headers (RESOURCE_EXHAUSTED, THROTTLED, RetryInfo, no header
// metadata), logged and counted once, takes nothing from the read pool, and gives its place of
// the client's concurrency back at once; an allowed call carries the RateLimit headers.
func TestSharedRateRefusedBeforeTheRead(t *testing.T) {
	t.Parallel()
	r := redistest.Start(t)
	var limits *quota.Limiter
	h := startGuard(t, func(g *Guard) {
		var err error
		if limits, err = quota.New(quota.Config{Service: "forecast", Rate: 0.01, Burst: 1, Concurrency: 1, RedisURL: r.URL()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { limits.Close() })
		g.Gate.Limits = limits
	})
	score := scoringv1.NewScoringServiceClient(h.conn)
	authed := bearer("Bearer " + h.token)
	var md metadata.MD
	if _, err := score.ScoreItemResults(authed, scoreOfSize(t, 100), grpc.Header(&md)); err != nil {
		t.Fatalf("the burst's call: got %v; want OK", err)
	}
	if got := md.Get(quota.StateMD); len(got) != 1 || got[0] != `"rate";r=0;t=100` {
		t.Errorf("the allowed call's %s: got %q; want \"rate\";r=0;t=100", quota.StateMD, got)
	}
	md = nil
	_, err := score.ScoreItemResults(authed, scoreOfSize(t, 100), grpc.Header(&md))
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != "THROTTLED" || retryOf(err) < 99*time.Second {
		t.Fatalf("a call over the rate: got %v (retry %s); want ResourceExhausted, THROTTLED, retry after about 100 s", err, retryOf(err))
	}
	if len(md.Get(quota.StateMD)) != 0 || len(md.Get(quota.PolicyMD)) != 0 {
		t.Errorf("the refusal's header metadata: got %v; want none (the status alone)", md)
	}
	waitFor(t, "the refusal logged and counted", func() bool {
		return h.count(scoreMethod, "ResourceExhausted") == 1 && h.logged(scoreMethod, "ResourceExhausted")
	})
	if got, held := h.refusals("grpc", "read_pool"), h.readsHeld(t); got != 0 || held != 0 {
		t.Errorf("the read pool: %v refusals, %v bytes held; want none taken", got, held)
	}
	slot, err := limits.Acquire("demo")
	if err != nil {
		t.Errorf("the client's one place after the refusal: got %v; want it given back", err)
	}
	slot.Done()
	if limits.Fallbacks() != 0 {
		t.Errorf("decisions without Redis: got %d; want 0", limits.Fallbacks())
	}
}
