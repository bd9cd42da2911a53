package serve

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

const (
	groupMethod  = "/yardstick.forecast.v1.ForecastService/ForecastReadingGroup"
	scoreMethod  = "/yardstick.scoring.v1.ScoringService/ScoreItemResults"
	issueMethod  = "/yardstick.auth.v1.TokenService/IssueToken"
	healthMethod = "/grpc.health.v1.Health/Check"
	watchMethod  = "/grpc.health.v1.Health/Watch"
	mib          = 1 << 20
)

// errorInfoOf is the ErrorInfo detail of a status error (nil when it has none).
func errorInfoOf(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// groupLimit is a group forecast's message limit over gRPC: 100,000 students of 29 bytes and
// 64 KiB (grpcGroupLimit).
const groupLimit = 2965536

// TestGRPCLimits pins the receive limits: the server-wide one is the largest method limit, and
// each method takes its own JSON limit, but a group forecast what 100,000 students take in
// protobuf. Each transport limit is pinned too.
func TestGRPCLimits(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	if got, want := h.srv.guard.ceiling, int64(groupLimit); got != want {
		t.Errorf("server-wide receive limit of a server with group methods: got %d; want %d", got, want)
	}
	if got, want := h.srv.guard.readTimeout, 10*time.Second; got != want {
		t.Errorf("time a call has to send its message: got %s; want %s", got, want)
	}
	if got, want := routes.GRPCGroupLimit(routes.Limits{MaxGroupBodyBytes: 16 * mib, MaxStudents: 1000}), int64(1000*29+65536); got != want {
		t.Errorf("group limit for 1,000 students: got %d; want %d", got, want)
	}
	if got, want := routes.GRPCGroupLimit(routes.Limits{MaxGroupBodyBytes: 2 * mib, MaxStudents: 100000}), int64(2*mib); got != want {
		t.Errorf("group limit under a smaller JSON limit: got %d; want %d (the JSON limit)", got, want)
	}
	if maxHeaderListBytes != 16384 || streamWindowBytes != 65536 || connWindowBytes != 1048576 || maxTokenlessPerConn != 2 {
		t.Errorf("transport limits: header list %d, stream window %d, connection window %d, calls without a token per connection %d; want 16384, 65536, 1048576, 2",
			maxHeaderListBytes, streamWindowBytes, connWindowBytes, maxTokenlessPerConn)
	}
	for _, tc := range []struct {
		method string
		want   int64
	}{
		{groupMethod, groupLimit},
		{"/yardstick.forecast.v1.ForecastService/ForecastMathGroup", groupLimit},
		{"/yardstick.forecast.v1.ForecastService/ForecastReading", mib},
		{scoreMethod, mib},
		{issueMethod, 64 << 10},
		{healthMethod, mib},
	} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			if got := h.srv.routes.ByMethod[tc.method].MessageLimit; got != tc.want {
				t.Errorf("limit: got %d; want %d", got, tc.want)
			}
		})
	}
	t.Run("scoring alone", func(t *testing.T) {
		t.Parallel()
		s := start(t, testConfig(t)) // the fake scoring service only: 1 MiB methods
		if got, want := s.srv.guard.ceiling, int64(mib); got != want {
			t.Errorf("server-wide receive limit: got %d; want %d", got, want)
		}
	})
}

// TestGRPCRefusedBeforeRead: a group call of the largest size without a valid token, or without the permission, is
// refused on its headers: the server reads a small part of what was sent and decodes nothing,
// and answers with the same status and ErrorInfo as the interceptor did. The refusal is logged
// and counted.
func TestGRPCRefusedBeforeRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		auth      func(h *guardHarness, t *testing.T) string
		code      codes.Code
		reason    string
		maxRead   int64 // bytes the server may read during the call
		minRead   int64
		exception string
	}{
		{"no token", func(*guardHarness, *testing.T) string { return "" }, codes.Unauthenticated, "NOT_AUTHENTICATED", 256 << 10, 0, rpcerr.ExceptionNotAuthenticated},
		{"garbage token", func(*guardHarness, *testing.T) string { return "Bearer not.a.jwt" }, codes.Unauthenticated, "NOT_AUTHENTICATED", 256 << 10, 0, rpcerr.ExceptionNotAuthenticated},
		{"tampered token", func(h *guardHarness, _ *testing.T) string { return "Bearer " + h.token[:len(h.token)-2] + "xx" }, codes.Unauthenticated, "NOT_AUTHENTICATED", 256 << 10, 0, rpcerr.ExceptionNotAuthenticated},
		{"no permission", func(h *guardHarness, t *testing.T) string { return "Bearer " + h.issue(t, "reader", readerSecret) }, codes.PermissionDenied, "PERMISSION_DENIED", 256 << 10, 0, rpcerr.ExceptionPermissionDenied},
		// The control: the same call with a valid token is read whole.
		{"valid token", func(h *guardHarness, _ *testing.T) string { return "Bearer " + h.token }, codes.OK, "", 1 << 40, groupLimit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startGuard(t)
			ctx := bearer(tc.auth(h, t))
			req := groupOfSize(t, groupLimit)
			before := h.lis.read.Load()
			_, err := forecastv1.NewForecastServiceClient(h.conn).ForecastReadingGroup(ctx, req)
			read := h.lis.read.Load() - before
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			if read > tc.maxRead || read < tc.minRead {
				t.Errorf("server read %d bytes of a %d-byte call; want between %d and %d", read, groupLimit, tc.minRead, tc.maxRead)
			}
			if tc.code == codes.OK {
				return
			}
			info := errorInfoOf(err)
			if info == nil || info.GetReason() != tc.reason || info.GetMetadata()[rpcerr.ExceptionKey] != tc.exception || info.GetMetadata()[rpcerr.InfoKey] == "" {
				t.Errorf("ErrorInfo: got %v; want reason %s, exceptionType %s and the additional info", info, tc.reason, tc.exception)
			}
			if got := h.count(groupMethod, tc.code.String()); got != 1 {
				t.Errorf("requests counted: got %v; want 1", got)
			}
			if !h.logged(groupMethod, tc.code.String()) {
				t.Errorf("no log line for the refused call:\n%s", h.logs)
			}
		})
	}
}

// TestGRPCMethodLimits: exactly a method's limit is taken, one byte more is refused with
// ResourceExhausted, on 1 MiB, group (groupLimit) and 64 KiB methods.
func TestGRPCMethodLimits(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	authed := bearer("Bearer " + h.token)
	score := scoringv1.NewScoringServiceClient(h.conn)
	group := forecastv1.NewForecastServiceClient(h.conn)
	login := authv1.NewTokenServiceClient(h.conn)
	for _, tc := range []struct {
		name   string
		call   func(t *testing.T) error
		code   codes.Code
		reason string // ErrorInfo reason; "" = none (gRPC's own refusal)
	}{
		{"1 MiB method, exactly 1 MiB", func(t *testing.T) error {
			_, err := score.ScoreItemResults(authed, scoreOfSize(t, mib))
			return err
		}, codes.OK, ""},
		{"1 MiB method, 1 MiB + 1", func(t *testing.T) error {
			_, err := score.ScoreItemResults(authed, scoreOfSize(t, mib+1))
			return err
		}, codes.ResourceExhausted, "REQUEST_TOO_LARGE"},
		{"group method, exactly its limit", func(t *testing.T) error {
			_, err := group.ForecastReadingGroup(authed, groupOfSize(t, groupLimit))
			return err
		}, codes.OK, ""},
		{"group method, its limit + 1", func(t *testing.T) error {
			_, err := group.ForecastReadingGroup(authed, groupOfSize(t, groupLimit+1))
			return err
		}, codes.ResourceExhausted, ""},
		// IssueToken takes /authToken's 64 KiB; a wrong secret of the right size is read and
		// checked (Unauthenticated), one byte more is not.
		{"64 KiB method, exactly 64 KiB", func(t *testing.T) error {
			_, err := login.IssueToken(context.Background(), issueOfSize(t, 64<<10))
			return err
		}, codes.Unauthenticated, "NOT_AUTHENTICATED"},
		{"64 KiB method, 64 KiB + 1", func(t *testing.T) error {
			_, err := login.IssueToken(context.Background(), issueOfSize(t, 64<<10+1))
			return err
		}, codes.ResourceExhausted, "REQUEST_TOO_LARGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call(t)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			if tc.reason != "" {
				if info := errorInfoOf(err); info.GetReason() != tc.reason {
					t.Errorf("ErrorInfo: got %v; want reason %s", info, tc.reason)
				}
			}
		})
	}
	if e := rpcerr.ToHTTP(tooLarge(mib+1, mib)); e.Status != 413 || e.Body.ExceptionType != rpcerr.ExceptionTooLarge {
		t.Errorf("the JSON front would answer a method's size refusal %d %s; want 413 %s", e.Status, e.Body.ExceptionType, rpcerr.ExceptionTooLarge)
	}
}

// TestCheckReceived: the interceptors' own check of a method's limit, from the codec's note of
// the message's size (the codec refuses earlier when the request type tells the limit). A note is
// taken once.
func TestCheckReceived(t *testing.T) {
	t.Parallel()
	malformed := rpcerr.Invalid("", "broken")
	for _, tc := range []struct {
		name string
		note *received
		want codes.Code
	}{
		{"at the limit", &received{size: 100}, codes.OK},
		{"one byte over", &received{size: 101}, codes.ResourceExhausted},
		{"refused by the codec", &received{size: 10, refused: malformed}, codes.InvalidArgument},
		{"no note (a message that fits every method of its type)", nil, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &Server{routes: &routes.Table{ByMethod: map[string]*routes.Route{scoreMethod: {MessageLimit: 100}}}, guard: &grpcGuard{codec: newGuardCodec(newWireCodec(Limits{}))}}
			msg := &scoringv1.ScoreItemResultsRequest{}
			if tc.note != nil {
				s.guard.codec.note(msg, *tc.note)
			}
			r, err := s.checkReceived(scoreMethod, msg)
			if got := status.Code(err); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
			if tc.note != nil && r != *tc.note {
				t.Errorf("note: got %+v; want %+v", r, *tc.note)
			}
			if r, err := s.checkReceived(scoreMethod, msg); status.Code(err) != codes.OK || r != (received{}) {
				t.Errorf("second check: got %+v, %v; want no note, OK (the note was taken)", r, err)
			}
		})
	}
}

// TestGuardCodecNotes: the codec notes a message's size only from its type's noteFrom (over the
// smallest limit of its methods, or where the budget starts counting), refuses one over the
// largest limit of its type without decoding it, notes every message protobuf-go decoded (the
// only ones that may hold unknown fields), and notes nothing for a small message of a known type
// that the layouts decoded (the common call pays no table write).
func TestGuardCodecNotes(t *testing.T) {
	t.Parallel()
	body := func(n int, extra ...byte) mem.BufferSlice {
		b, err := proto.Marshal(&scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr(strings.Repeat("x", n))}}})
		if err != nil {
			t.Fatal(err)
		}
		return mem.BufferSlice{mem.SliceBuffer(append(b, extra...))}
	}
	name := (&scoringv1.ScoreItemResultsRequest{}).ProtoReflect().Descriptor().FullName()
	other := (&scoringv1.ScoreScaleRequest{}).ProtoReflect().Descriptor().FullName()
	small, mid, large := body(10), body(150), body(300)
	withUnknown := body(10, 0xf8, 0x07, 0x01) // field 127, varint 1
	limits := typeLimits{largest: 200, smallest: 100, noteFrom: 101}
	for _, tc := range []struct {
		name     string
		data     mem.BufferSlice
		limits   map[protoreflect.FullName]typeLimits
		noted    bool
		deferred bool // kept as bytes for the interceptor to decode once admitted
		general  bool
		code     codes.Code
		decoded  bool
	}{
		{"fits every method: no note", small, map[protoreflect.FullName]typeLimits{name: limits}, false, false, false, codes.OK, true},
		{"one byte under noteFrom: no note", small, map[protoreflect.FullName]typeLimits{name: {largest: 200, smallest: 100, noteFrom: int64(small.Len()) + 1}}, false, false, false, codes.OK, true},
		{"at noteFrom: its size, decoded later", small, map[protoreflect.FullName]typeLimits{name: {largest: 200, smallest: 100, noteFrom: int64(small.Len())}}, true, true, false, codes.OK, true},
		{"between the smallest and the largest limit: its size, decoded later", mid, map[protoreflect.FullName]typeLimits{name: limits}, true, true, false, codes.OK, true},
		{"an unknown field: decoded by protobuf-go, noted", withUnknown, map[protoreflect.FullName]typeLimits{name: limits}, true, false, true, codes.OK, true},
		{"a type the codec has no limits for: noted", small, map[protoreflect.FullName]typeLimits{other: limits}, true, false, false, codes.OK, true},
		{"over the largest: refused, not decoded", large, map[protoreflect.FullName]typeLimits{name: limits}, true, false, false, codes.ResourceExhausted, false},
		{"not protobuf: refused by protobuf-go", mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x05, 0x01})}, map[protoreflect.FullName]typeLimits{name: limits}, true, false, true, codes.InvalidArgument, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newGuardCodec(newWireCodec(Limits{}))
			c.limits = tc.limits
			msg := &scoringv1.ScoreItemResultsRequest{}
			if err := c.Unmarshal(tc.data, msg); err != nil {
				t.Fatalf("Unmarshal: %v; want nil (refusals are notes)", err)
			}
			r, ok := c.take(msg)
			if ok != tc.noted {
				t.Fatalf("noted: got %v; want %v", ok, tc.noted)
			}
			if got := r.raw != nil; got != tc.deferred {
				t.Fatalf("kept as bytes: got %v; want %v", got, tc.deferred)
			}
			if tc.deferred && len(msg.GetItems()) != 0 {
				t.Fatalf("a message kept as bytes was decoded by the codec")
			}
			c.decodeRaw(&r, msg)
			if got := len(msg.GetItems()) == 1; got != tc.decoded {
				t.Errorf("decoded: got %v; want %v", got, tc.decoded)
			}
			if ok && r.size != int64(tc.data.Len()) {
				t.Errorf("noted size: got %d; want %d", r.size, tc.data.Len())
			}
			if r.general != tc.general {
				t.Errorf("decoded by protobuf-go: got %v; want %v", r.general, tc.general)
			}
			if got := status.Code(r.refused); got != tc.code {
				t.Errorf("refusal: got %v; want %v", got, tc.code)
			}
		})
	}
}

// TestGuardNoteFrom: the size from which the codec notes a request type's messages, as bind
// works it out from the served methods: every group forecast message (the budget costs each),
// else 64 KiB (where the budget starts counting) or one byte over the smallest limit of the
// type's methods, whichever is smaller.
func TestGuardNoteFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maxBody int64
		msg     proto.Message
		want    int64
	}{
		{1 << 20, &forecastv1.GroupForecastRequest{}, 0},
		{1 << 20, &forecastv1.ForecastRequest{}, 64 << 10},
		{1 << 20, &scoringv1.ScoreItemResultsRequest{}, 64 << 10},
		{1 << 20, &authv1.IssueTokenRequest{}, 64 << 10},
		{2048, &forecastv1.GroupForecastRequest{}, 0},
		{2048, &forecastv1.ForecastRequest{}, 2049},
		{2048, &scoringv1.ScoreItemResultsRequest{}, 2049},
	} {
		cfg := forecastConfig(t)
		cfg.Limits.MaxBodyBytes = tc.maxBody
		ctx, cancel := context.WithCancel(context.Background())
		srv, err := New(ctx, cfg, slog.New(slog.DiscardHandler), guardService())
		if err != nil {
			cancel()
			t.Fatalf("New: %v", err)
		}
		name := tc.msg.ProtoReflect().Descriptor().FullName()
		if got := srv.guard.codec.limits[name].noteFrom; got != tc.want {
			t.Errorf("body limit %d, %s: got noteFrom %d; want %d", tc.maxBody, name, got, tc.want)
		}
		cancel()
	}
}

// TestGRPCLoginReadCap: IssueToken calls are read at most maxLoginReads at a time across all
// connections. The cap-th call is taken, the next refused at once with ResourceExhausted and a
// RetryInfo, health checks still pass, and every slot comes back however its call ended:
// success, wrong secret, message over the limit, caller gone.
func TestGRPCLoginReadCap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	if maxLoginReads != 4 || maxInfraReads != 4 {
		t.Fatalf("caps: got %d logins, %d infrastructure; want 4 and 4 (README, Limits and protection)", maxLoginReads, maxInfraReads)
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
	waitFor(t, "every login slot taken", func() bool { return len(h.srv.guard.logins) == maxLoginReads })

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
	waitFor(t, "every login slot back", func() bool { return len(h.srv.guard.logins) == 0 })
	if _, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}); err != nil {
		t.Errorf("login after the slots came back: %v", err)
	}
}

// TestGRPCTokenlessPerConnection: one connection holds at most 2 calls without a token in the
// slots; its third is refused at once while another connection's call is read.
func TestGRPCTokenlessPerConnection(t *testing.T) {
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
	waitFor(t, "two login slots taken", func() bool { return len(h.srv.guard.logins) == 2 })
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

// TestGRPCInfraReadCap: health calls have their own slots; a Watch gives its slot back once it
// has read its one message, though it stays open.
func TestGRPCInfraReadCap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	hc := healthpb.NewHealthClient(h.conn)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for range maxInfraReads + 2 {
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
	waitFor(t, "watches hold no slot", func() bool { return len(h.srv.guard.infra) == 0 })
	// Hold every infrastructure slot with checks whose message has not come.
	for range maxInfraReads {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		if _, err := h.dial(t).NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, healthMethod); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every infrastructure slot taken", func() bool { return len(h.srv.guard.infra) == maxInfraReads })
	if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("check over the cap: got %v; want ResourceExhausted", err)
	}
	if _, err := authv1.NewTokenServiceClient(h.conn).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: ptr("demo"), ClientSecret: ptr("demo-secret")}); err != nil {
		t.Errorf("login while the infrastructure slots are taken: %v", err)
	}
}

// TestGRPCTokenlessReadTimeout: a call without a token that holds a read slot must send its
// message, and end its stream, within the read timeout; then it is cancelled and the slot comes
// back. A call that sends in time is answered.
func TestGRPCTokenlessReadTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startGuard(t, func(s *Server) { s.guard.readTimeout = timeout })
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
				cs, err := h.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: tc.server}, tc.method)
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
	waitFor(t, "every slot back", func() bool { return len(h.srv.guard.logins)+len(h.srv.guard.infra) == 0 })
}

// TestGRPCMalformedProtobuf: a message that is not protobuf is answered InvalidArgument with the
// validation error's details, on unary and streaming methods, with a token or without one needed;
// it is logged and counted, and the codec keeps no note of it afterwards.
func TestGRPCMalformedProtobuf(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	truncated := rawMessage{0x0a, 0x05, 0x01} // field 1, 5 bytes announced, 1 sent
	valid, err := proto.Marshal(&scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("ok"), Result: ptr(int32(1))}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		method string
		auth   string
		stream bool
		msgs   []rawMessage
		code   codes.Code
	}{
		{"scoring, with a token", scoreMethod, "Bearer " + h.token, false, []rawMessage{truncated}, codes.InvalidArgument},
		{"scoring, valid bytes", scoreMethod, "Bearer " + h.token, false, []rawMessage{valid}, codes.OK},
		{"scoring, without a token", scoreMethod, "", false, []rawMessage{truncated}, codes.Unauthenticated},
		{"IssueToken", issueMethod, "", false, []rawMessage{truncated}, codes.InvalidArgument},
		{"health check", healthMethod, "", false, []rawMessage{truncated}, codes.InvalidArgument},
		{"health watch", watchMethod, "", true, []rawMessage{truncated}, codes.InvalidArgument},
		// A unary call with a second, malformed message: gRPC's own cardinality error.
		{"second message malformed", scoreMethod, "Bearer " + h.token, false, []rawMessage{valid, truncated}, codes.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(bearer(tc.auth), 10*time.Second)
			defer cancel()
			cs, err := h.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: tc.stream}, tc.method, grpc.ForceCodecV2(rawBytesCodec{}))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				_ = cs.SendMsg(&m)
			}
			_ = cs.CloseSend()
			var out rawMessage
			err = cs.RecvMsg(&out)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			if tc.code == codes.InvalidArgument {
				e := rpcerr.ToHTTP(err)
				want := "the message is not valid protobuf: "
				if got := e.Body.ValidationErrors["nonFieldErrors"]; len(got) != 1 || !strings.HasPrefix(got[0], want) || errorInfoOf(err).GetReason() != "VALIDATION_ERROR" {
					t.Errorf("details: got %+v, %v; want a VALIDATION_ERROR whose nonFieldErrors say %q", e.Body, errorInfoOf(err), want)
				}
				waitFor(t, "the call logged and counted", func() bool {
					return h.count(tc.method, "InvalidArgument") >= 1 && h.logged(tc.method, "InvalidArgument")
				})
			}
			// A note whose message no interceptor saw (the second-message case) goes with the
			// message.
			waitFor(t, "no note left in the codec", func() bool {
				runtime.GC()
				return syncMapLen(&h.srv.guard.codec.notes) == 0 && h.srv.guard.codec.waiting.Load() == 0
			})
		})
	}
}

// TestInterceptorAuthorizesWithoutTap: a direct call the tap handle did not authorize (no
// verdict, or a verdict for another method) is authorized by the interceptor: never zero times.
func TestInterceptorAuthorizesWithoutTap(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	handler := func(context.Context, any) (any, error) { return "ran", nil }
	for _, tc := range []struct {
		name string
		call *grpcCall
	}{
		{"no verdict", nil},
		{"verdict for another method", &grpcCall{authorizedFor: healthMethod}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tc.call != nil {
				ctx = context.WithValue(ctx, grpcCallKey{}, tc.call)
			}
			out, err := h.srv.unary(ctx, &scoringv1.ScoreItemResultsRequest{}, &grpc.UnaryServerInfo{FullMethod: scoreMethod}, handler)
			if status.Code(err) != codes.Unauthenticated || out != nil {
				t.Errorf("got %v, %v; want Unauthenticated and the handler not run", out, err)
			}
		})
	}
	t.Run("a tap-authorized call names its client in the log", func(t *testing.T) {
		t.Parallel()
		if _, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(bearer("Bearer "+h.token), scoreOfSize(t, 100)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.logs.String(), `"route":"`+scoreMethod+`","client_id":"demo","code":"OK"`) {
			t.Errorf("no log line with client_id demo:\n%s", h.logs)
		}
	})
}

func syncMapLen(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}

// waitFor polls cond for up to 5 s: slots come back when gRPC ends a call, just after the
// caller has its answer.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGRPCCallsGRPCEnds: calls that end before the unary interceptor (a message over the
// server-wide limit, which gRPC refuses itself) and streaming calls are logged and counted once.
// gRPC does not say how it answered the first kind: its line says Unknown (the caller got
// ResourceExhausted); a stream's line has the stream's own status.
func TestGRPCCallsGRPCEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		call   func(t *testing.T, h *guardHarness) error
		code   codes.Code // what the caller gets
		logged codes.Code // what the log line and the metric say
		level  string     // the log line's
	}{
		{"over the server-wide limit", groupMethod, func(t *testing.T, h *guardHarness) error {
			_, err := forecastv1.NewForecastServiceClient(h.conn).ForecastReadingGroup(bearer("Bearer "+h.token), groupOfSize(t, 16*mib+1))
			return err
		}, codes.ResourceExhausted, codes.Unknown, "WARN"},
		{"health watch the caller ends", watchMethod, func(t *testing.T, h *guardHarness) error {
			ctx, cancel := context.WithCancel(context.Background())
			w, err := healthpb.NewHealthClient(h.conn).Watch(ctx, &healthpb.HealthCheckRequest{})
			if err == nil {
				_, err = w.Recv()
			}
			cancel()
			return err
		}, codes.Canceled, codes.Canceled, "INFO"},
		{"an ordinary call, for comparison", scoreMethod, func(t *testing.T, h *guardHarness) error {
			_, err := scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(bearer("Bearer "+h.token),
				&scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: ptr("ok"), Result: ptr(int32(1))}}})
			return err
		}, codes.OK, codes.OK, "INFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startGuard(t)
			if err := tc.call(t, h); tc.code != codes.Canceled && status.Code(err) != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			waitFor(t, "the call logged and counted", func() bool {
				return h.count(tc.method, tc.logged.String()) == 1 && h.logged(tc.method, tc.logged.String())
			})
			if !h.loggedAt(tc.method, tc.logged.String(), tc.level) {
				t.Errorf("the call's log line is not at level %s:\n%s", tc.level, h.logs.String())
			}
			time.Sleep(2 * endedCallSweep) // a second line, were there one, would have come by now
			if got := h.countAll(tc.method); got != 1 {
				t.Errorf("calls counted: got %v; want 1 (logged once)", got)
			}
			h.srv.guard.open.mu.Lock()
			left := h.srv.guard.open.head
			h.srv.guard.open.mu.Unlock()
			if left != nil {
				t.Errorf("a call is still listed as open after it ended: %+v", left)
			}
		})
	}
}

// TestOpenCalls: the list of calls between the tap handle and an interceptor unlinks any member,
// and a sweep takes exactly the calls whose context has ended.
func TestOpenCalls(t *testing.T) {
	t.Parallel()
	var o openCalls
	ctxs := make([]context.CancelFunc, 4)
	calls := make([]*grpcCall, 4)
	for i := range calls {
		ctx, cancel := context.WithCancel(context.Background())
		calls[i], ctxs[i] = &grpcCall{ctx: ctx}, cancel
		o.add(calls[i])
	}
	members := func() []*grpcCall {
		var out []*grpcCall
		for c := o.head; c != nil; c = c.next {
			out = append(out, c)
		}
		return out
	}
	o.remove(calls[1]) // a middle one
	o.remove(calls[3]) // the head (added last)
	o.remove(calls[3]) // twice: no harm
	if got := members(); len(got) != 2 || got[0] != calls[2] || got[1] != calls[0] {
		t.Fatalf("after removals: got %v; want calls 2 and 0", got)
	}
	if got := o.ended(time.Hour); len(got) != 0 {
		t.Fatalf("nothing ended: got %d calls", len(got))
	}
	ctxs[0]()
	if got := o.ended(time.Hour); len(got) != 1 || got[0] != calls[0] {
		t.Fatalf("call 0 ended: got %v; want call 0", got)
	}
	if got := members(); len(got) != 1 || got[0] != calls[2] || got[0].prev != nil {
		t.Fatalf("left: got %v; want call 2 alone", got)
	}
	// A call that has waited for its message longer than the read timeout is ended by the sweep,
	// and the next sweep finds it ended; one that has waited less is left alone.
	calls[2].cancel, calls[2].start = ctxs[2], time.Now().Add(-2*time.Second)
	if got := o.ended(3 * time.Second); len(got) != 0 || calls[2].ctx.Err() != nil || calls[2].timedOut.Load() {
		t.Fatalf("a call within the read timeout: got %d ended, err %v, timed out %v; want it left alone", len(got), calls[2].ctx.Err(), calls[2].timedOut.Load())
	}
	if got := o.ended(time.Second); len(got) != 0 || calls[2].ctx.Err() == nil || !calls[2].timedOut.Load() {
		t.Fatalf("a call past the read timeout: got %d ended, err %v, timed out %v; want it cancelled, not yet listed as ended", len(got), calls[2].ctx.Err(), calls[2].timedOut.Load())
	}
	if got := o.ended(time.Second); len(got) != 1 || got[0] != calls[2] {
		t.Fatalf("the next sweep: got %v; want call 2", got)
	}
	if got := endedEarly(calls[2]); status.Code(got) != codes.DeadlineExceeded {
		t.Errorf("what is known of it: got %v; want DeadlineExceeded", got)
	}
	for _, cancel := range ctxs {
		cancel()
	}
}
