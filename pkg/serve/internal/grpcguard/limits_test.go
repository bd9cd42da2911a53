package grpcguard

// The message step on a guarded server: each method's limit, both sides of it, and a message
// that is not protobuf.

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// groupLimit is a group forecast's message limit over gRPC: 100,000 students of 29 bytes and
// 64 KiB (routes.GRPCGroupLimit).
const groupLimit = 2965536

// TestMethodLimits: exactly a method's limit is taken, one byte more is refused with
// ResourceExhausted, on 1 MiB, group (groupLimit) and 64 KiB methods.
func TestMethodLimits(t *testing.T) {
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
	// How the JSON front would answer a method's size refusal: TestTransportLimits.
}

// TestMalformedProtobuf: a message that is not protobuf is answered InvalidArgument with the
// validation error's details, on unary and streaming methods, with a token or without one needed;
// it is logged and counted.
func TestMalformedProtobuf(t *testing.T) {
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
		})
	}
}

// rawBytesCodec sends *rawMessage bytes as they are, so a test can send what no proto library would.
type rawBytesCodec struct{}

type rawMessage []byte

func (rawBytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*rawMessage))}, nil
}

func (rawBytesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawMessage) = data.Materialize()
	return nil
}

func (rawBytesCodec) Name() string { return "proto" }
