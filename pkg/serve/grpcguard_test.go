package serve

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
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
// 64 KiB, as the forecast service sets it (the fakes' Methods: fakeLimits.groupLimits).
const groupLimit = 2965536

// TestGRPCLimits pins the receive limits: the server-wide one is the largest method limit (gRPC
// itself refuses a message past it, without an ErrorInfo; a message past a smaller method's limit
// but within it is the method step's REQUEST_TOO_LARGE), and each method takes its own JSON limit,
// but a group forecast what 100,000 students take in protobuf. Each transport limit is pinned too.
func TestGRPCLimits(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	if got, want := h.srv.routes.Ceiling, int64(groupLimit); got != want {
		t.Errorf("server-wide receive limit of a server with group methods: got %d; want %d", got, want)
	}
	authed := bearer("Bearer " + h.token)
	_, err := forecastv1.NewForecastServiceClient(h.conn).ForecastReadingGroup(authed, groupOfSize(t, groupLimit+1))
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err) != nil {
		t.Errorf("a message a byte past the server-wide limit: got %v; want gRPC's own RESOURCE_EXHAUSTED", err)
	}
	_, err = scoringv1.NewScoringServiceClient(h.conn).ScoreItemResults(authed, scoreOfSize(t, mib+1))
	if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err).GetReason() != "REQUEST_TOO_LARGE" {
		t.Errorf("a 1 MiB method's message a byte past its limit, within the server-wide one: got %v; want REQUEST_TOO_LARGE", err)
	}
	if got, want := h.srv.guard.ReadTimeout, 10*time.Second; got != want {
		t.Errorf("time a call has to send its message: got %s; want %s", got, want)
	}
	// The group limit's rule is pinned by the forecast service's TestGroupMessageLimit, the transport
	// limits by grpcguard's TestTransportLimits.
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
		s := startService(t, testConfig(t), contractService(t, "scoring")) // 1 MiB methods
		if got, want := s.srv.routes.Ceiling, int64(mib); got != want {
			t.Errorf("server-wide receive limit: got %d; want %d", got, want)
		}
		tok := bearer("Bearer " + s.token("demo", "demo-secret"))
		_, err := scoringv1.NewScoringServiceClient(s.grpc).ScoreItemResults(tok, scoreOfSize(t, mib+1))
		if status.Code(err) != codes.ResourceExhausted || errorInfoOf(err) != nil {
			t.Errorf("a message a byte past the server-wide limit of 1 MiB: got %v; want gRPC's own RESOURCE_EXHAUSTED", err)
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
		{"garbage token", func(*guardHarness, *testing.T) string { return "Bearer not.a.jwt" }, codes.Unauthenticated, "TOKEN_INVALID", 256 << 10, 0, rpcerr.ExceptionNotAuthenticated},
		{"tampered token", func(h *guardHarness, _ *testing.T) string { return "Bearer " + h.token[:len(h.token)-2] + "xx" }, codes.Unauthenticated, "TOKEN_INVALID", 256 << 10, 0, rpcerr.ExceptionNotAuthenticated},
		{"no permission", func(h *guardHarness, t *testing.T) string { return "Bearer " + h.issue(t, "reader", readerSecret) }, codes.PermissionDenied, "PERMISSION_DENIED", 256 << 10, 0, rpcerr.ExceptionPermissionDenied},
		// The control: the same call with a valid token is read whole.
		{"valid token", func(h *guardHarness, _ *testing.T) string { return "Bearer " + h.token }, codes.OK, "", 1 << 40, groupLimit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startGuard(t)
			id := "refused-" + strings.ReplaceAll(tc.name, " ", "-")
			ctx := metadata.AppendToOutgoingContext(bearer(tc.auth(h, t)), "x-request-id", id)
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
			// The line has the facts the tap handle made: the caller's request id, and the
			// client once its token is verified (a 403 names it, as the JSON front's does).
			client := "" // none before the token is verified
			if tc.code == codes.PermissionDenied {
				client = `"client_id":"reader"`
			}
			_, line, _ := strings.Cut(h.logs.String(), `"request_id":"`+id+`"`)
			line, _, _ = strings.Cut(line, "\n")
			if line == "" || !strings.Contains(line, client) {
				t.Errorf("the refused call's line: got\n%s\nwant one with request_id %s and %s", h.logs, id, client)
			}
		})
	}
}
