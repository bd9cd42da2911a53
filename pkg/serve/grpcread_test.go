package serve

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// retryOf is the RetryInfo delay of err, or 0.
func retryOf(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			return r.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// TestGRPCReadTimeoutWithToken: a call with a token that never sends its message is ended after
// the read timeout (logged DeadlineExceeded); one that sends within it is answered.
func TestGRPCReadTimeoutWithToken(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(s *Server) { s.guard.ReadTimeout = timeout })
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

// TestGRPCReadPool: a call with a token takes the most gRPC may read for it from the read pool
// before its message is read. With a pool of one read, held by a call whose message has not come,
// the next call waits 1 s and is answered ResourceExhausted, OVERLOADED, retry after 1 s; once the
// holder ends, calls are read again.
func TestGRPCReadPool(t *testing.T) {
	t.Parallel()
	// The pool's size and wait: admission's TestReadPoolSize.
	h := startGuard(t, func(s *Server) { s.guard.SetReadPool(admission.NewReadPool(0, s.guard.Ceiling())) })
	authed := bearer("Bearer " + h.token)
	holdCtx, release := context.WithCancel(authed)
	defer release()
	if _, err := h.conn.NewStream(holdCtx, &grpc.StreamDesc{ClientStreams: true}, scoreMethod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read pool held", func() bool {
		gone, cancel := context.WithCancel(context.Background())
		cancel() // Take does not wait: a byte is free now, or the pool is held
		if r, ok := h.srv.guard.ReadPool().Take(gone, "probe", 0, 1); ok {
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

// TestGRPCRefusedGroupIsNotDecoded: a 100,000-student group call over gRPC that the budget cannot
// take is refused ResourceExhausted (OVERLOADED, retry after 1 s) without being decoded: the
// process allocates the message as the client marshals it and the server reads it (about 3 MB
// each), not what decoding it adds. Not parallel: it reads the process's allocation count.
func TestGRPCRefusedGroupIsNotDecoded(t *testing.T) {
	h := startGuard(t)
	full, fillErr := h.srv.budget.AdmitDecode(context.Background(), "", true, h.srv.budget.Capacity()) // costs at least the budget
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

// TestGRPCReflectionGoesQuiet: a reflection stream that sends nothing for the read timeout is
// cut, and gives its slot back.
func TestGRPCReflectionGoesQuiet(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(s *Server) { s.guard.ReadTimeout = timeout })
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

// TestProbe: the probe listener answers Check and List from the main port's health state, even
// while every slot of the main port is held by calls that send nothing; it refuses Watch, messages
// over 1 KiB and more than 4 calls on a connection, and ends a call that sends nothing after 2 s.
func TestProbe(t *testing.T) {
	t.Parallel()
	// The probe's limits: grpcguard's TestTransportLimits.
	probeLis := loopback(t)
	h := startGuard(t, func(s *Server) { s.probeLis = probeLis })
	probe, err := grpc.NewClient(probeLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	check := func(c *grpc.ClientConn, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return healthpb.NewHealthClient(c).Check(ctx, req)
	}
	waitFor(t, "serving", func() bool {
		r, err := check(probe, &healthpb.HealthCheckRequest{})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
	// Hold every slot of the main port.
	for range grpcguard.MaxInfraReads / grpcguard.MaxTokenlessPerConn {
		c := h.dial(t)
		for range grpcguard.MaxTokenlessPerConn {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if _, err := c.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, healthMethod); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the main port's slots held", func() bool { return h.infraSlots() == grpcguard.MaxInfraReads })
	if _, err := check(h.dial(t), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a check on the main port: got %v; want ResourceExhausted (slots held)", err)
	}
	for i := range 5 {
		if r, err := check(probe, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("probe %d while the main port's slots are held: got %v, %v; want SERVING", i, r, err)
		}
	}
	if r, err := check(probe, &healthpb.HealthCheckRequest{Service: "yardstick.forecast.v1.ForecastService"}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("probe of the forecast service: got %v, %v; want SERVING", r, err)
	}
	if _, err := check(probe, &healthpb.HealthCheckRequest{Service: string(make([]byte, 1025))}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a probe message over 1 KiB: got %v; want ResourceExhausted", err)
	}
	w, err := healthpb.NewHealthClient(probe).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("Watch on the probe port: got %v; want Unimplemented", err)
	}
	cs, err := probe.NewStream(context.Background(), &grpc.StreamDesc{ClientStreams: true}, healthMethod)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cs.RecvMsg(&healthpb.HealthCheckResponse{}); status.Code(err) != codes.DeadlineExceeded || time.Since(start) > 4*time.Second {
		t.Errorf("a probe that sends nothing: got %v after %s; want DeadlineExceeded after 2 s", err, time.Since(start))
	}
}

// TestGRPCReflectionAbortIsNotAnError: a client that cuts its reflection stream off is a caller
// leaving, logged at INFO, not an error of ours.
func TestGRPCReflectionAbortIsNotAnError(t *testing.T) {
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
