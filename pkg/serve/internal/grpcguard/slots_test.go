package grpcguard

// The read slots of calls without a token: per pool, per connection, and the read timeout.

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// TestLoginReadCap: IssueToken calls are read at most MaxLoginReads at a time across all
// connections. The cap-th call is taken, the next refused at once with ResourceExhausted and a
// RetryInfo, health checks still pass, and every slot comes back however its call ended:
// success, wrong secret, message over the limit, caller gone.
func TestLoginReadCap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	if MaxLoginReads != 4 || MaxInfraReads != 4 {
		t.Fatalf("caps: got %d logins, %d infrastructure; want 4 and 4 (docs/operations.md, Limits and protection)", MaxLoginReads, MaxInfraReads)
	}
	// Hold every slot: calls whose headers are sent and whose message is not (yet).
	ends := []struct {
		name string
		req  proto.Message
		code codes.Code
	}{
		{"success", &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}, codes.OK},
		{"wrong secret", &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("wrong")}, codes.Unauthenticated},
		{"over the limit", issueOfSize(t, 64<<10+1), codes.ResourceExhausted},
		{"caller gone", nil, codes.Canceled},
	}
	type held struct {
		stream grpc.ClientStream
		cancel context.CancelFunc
	}
	var streams []held
	for range ends {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cs, err := h.dial(t).NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, issueMethod)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		streams = append(streams, held{cs, cancel})
	}
	waitFor(t, "every login slot taken", func() bool { return h.loginSlots() == MaxLoginReads })

	start := time.Now()
	_, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")})
	if status.Code(err) != codes.ResourceExhausted || time.Since(start) > 2*time.Second {
		t.Fatalf("call over the cap: got %v after %s; want ResourceExhausted at once", err, time.Since(start))
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry.GetRetryDelay().AsDuration() != time.Second {
		t.Errorf("RetryInfo: got %v; want a 1 s delay", retry)
	}
	if got := h.count(issueMethod, "ResourceExhausted"); got != 1 {
		t.Errorf("refusals counted: got %v; want 1", got)
	}
	if got := h.refusals("grpc", "read_slots"); got != 1 {
		t.Errorf("yardstick_admission_refusals_total{front=grpc,cause=read_slots}: got %v; want 1", got)
	}
	if _, err := healthpb.NewHealthClient(h.conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health check while the login slots are taken: %v", err)
	}

	var wg sync.WaitGroup
	for i, end := range ends {
		wg.Go(func() {
			cs := streams[i].stream
			if end.req == nil {
				streams[i].cancel()
			} else if err := cs.SendMsg(end.req); err != nil {
				t.Errorf("%s: send: %v", end.name, err)
			}
			_ = cs.CloseSend()
			err := cs.RecvMsg(&authv1.IssueTokenResponse{})
			if got := status.Code(err); got != end.code {
				t.Errorf("%s: got %v; want %v", end.name, err, end.code)
			}
		})
	}
	wg.Wait()
	waitFor(t, "every login slot back", func() bool { return h.loginSlots() == 0 })
	if _, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}); err != nil {
		t.Errorf("login after the slots came back: %v", err)
	}
}

// TestTokenlessPerConnection: one connection holds at most 2 calls without a token in the
// slots; its third is refused at once while another connection's call is read.
func TestTokenlessPerConnection(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	hog := h.dial(t)
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if _, err := hog.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, issueMethod); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two login slots taken", func() bool { return h.loginSlots() == 2 })
	login := &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}
	if _, err := authv1.NewTokenServiceClient(hog).IssueToken(context.Background(), login); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("third call without a token on the connection: got %v; want ResourceExhausted", err)
	}
	if _, err := healthpb.NewHealthClient(hog).Check(context.Background(), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a health check on the same connection: got %v; want ResourceExhausted (the count is per connection, not per pool)", err)
	}
	if _, err := authv1.NewTokenServiceClient(h.dial(t)).IssueToken(context.Background(), login); err != nil {
		t.Errorf("a login on another connection: %v", err)
	}
}

// TestInfraReadCap: health calls have their own slots; a Watch gives its slot back once it
// has read its one message, though it stays open.
func TestInfraReadCap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	hc := healthpb.NewHealthClient(h.conn)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for range MaxInfraReads + 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("watch: got %v, %v; want SERVING", r, err)
		}
	}
	waitFor(t, "watches hold no slot", func() bool { return h.infraSlots() == 0 })
	// Hold every infrastructure slot with checks whose message has not come.
	for range MaxInfraReads {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		if _, err := h.dial(t).NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, healthMethod); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every infrastructure slot taken", func() bool { return h.infraSlots() == MaxInfraReads })
	if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("check over the cap: got %v; want ResourceExhausted", err)
	}
	if _, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}); err != nil {
		t.Errorf("login while the infrastructure slots are taken: %v", err)
	}
}

// TestTokenlessReadTimeout: a call without a token that holds a read slot must send its
// message, and end its stream, within the read timeout; then it is cancelled and the slot comes
// back. A call that sends in time is answered.
func TestTokenlessReadTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(g *Guard) { g.ReadTimeout = timeout })
	login := &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}
	t.Run("calls", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			method    string
			server    bool          // server-streaming
			send      proto.Message // nil: headers only
			closeSend bool
			delay     time.Duration // before sending
			code      codes.Code
		}{
			{"IssueToken, headers only", issueMethod, false, nil, false, 0, codes.Canceled},
			{"IssueToken, message without the end of the stream", issueMethod, false, login, false, 0, codes.Canceled},
			{"IssueToken, in time", issueMethod, false, login, true, timeout / 3, codes.OK},
			{"health check, headers only", healthMethod, false, nil, false, 0, codes.Canceled},
			{"health watch, headers only", watchMethod, true, nil, false, 0, codes.Canceled},
			{"health watch, in time", watchMethod, true, &healthpb.HealthCheckRequest{}, true, timeout / 3, codes.OK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				// A connection each: one connection may hold only MaxTokenlessPerConn slots, and the
				// calls run side by side (a slot comes back a moment after its caller is answered).
				cs, err := h.dial(t).NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: tc.server}, tc.method)
				if err != nil {
					t.Fatal(err)
				}
				if tc.send != nil {
					time.Sleep(tc.delay)
					if err := cs.SendMsg(tc.send); err != nil {
						t.Fatal(err)
					}
				}
				if tc.closeSend {
					_ = cs.CloseSend()
				}
				start := time.Now()
				var out proto.Message = &authv1.IssueTokenResponse{}
				if tc.method != issueMethod {
					out = &healthpb.HealthCheckResponse{}
				}
				err = cs.RecvMsg(out)
				if got := status.Code(err); got != tc.code {
					t.Fatalf("got %v after %s; want %v", err, time.Since(start), tc.code)
				}
			})
		}
	})
	waitFor(t, "every slot back", func() bool { return h.loginSlots()+h.infraSlots() == 0 })
}

// loginSlots and infraSlots are the read slots held by calls without a token.
func (h *harness) loginSlots() int { return len(h.g.logins) }
func (h *harness) infraSlots() int { return len(h.g.infra) }
