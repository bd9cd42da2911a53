package grpcguard

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// TestTransportLimits pins the guard's transport limits, and how the JSON front would answer a
// method's size refusal.
func TestTransportLimits(t *testing.T) {
	t.Parallel()
	if maxHeaderListBytes != 16384 || streamWindowBytes != 65536 || connWindowBytes != 1048576 || MaxTokenlessPerConn != 2 {
		t.Errorf("transport limits: header list %d, stream window %d, connection window %d, calls without a token per connection %d; want 16384, 65536, 1048576, 2",
			maxHeaderListBytes, streamWindowBytes, connWindowBytes, MaxTokenlessPerConn)
	}
	if maxAbusePerSecond != 200 || abuseCooldown != time.Second {
		t.Errorf("abusive connections: %d a second, cooldown %s; want 200 and 1s", maxAbusePerSecond, abuseCooldown)
	}
	if probeMaxMessage != 1024 || probeMaxStreams != 4 || probeCallTimeout != 2*time.Second {
		t.Errorf("probe limits: %d bytes, %d calls, %s; want 1024, 4, 2s", probeMaxMessage, probeMaxStreams, probeCallTimeout)
	}
	if e := rpcerr.ToHTTP(tooLarge(mib+1, mib)); e.Status != 413 || e.Body.ExceptionType != rpcerr.ExceptionTooLarge {
		t.Errorf("the JSON front would answer a method's size refusal %d %s; want 413 %s", e.Status, e.Body.ExceptionType, rpcerr.ExceptionTooLarge)
	}
}

const (
	mib          = 1 << 20
	scoreMethod  = "/yardstick.scoring.v1.ScoringService/ScoreItemResults"
	healthMethod = "/grpc.health.v1.Health/Check"
)

func ptr[T any](v T) *T { return &v }

// TestCheckReceived: the interceptors' own check of a method's limit, from the codec's record of
// the message's size (the codec refuses earlier when the request type tells the limit). A record is
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
			g := &Guard{codec: newCodec(jsonwire.New(jsonwire.Options{}))}
			rt := &routes.Route{MessageLimit: 100}
			msg := &scoringv1.ScoreItemResultsRequest{}
			if tc.note != nil {
				g.codec.record(msg, *tc.note)
			}
			r, err := g.checkReceived(rt, msg)
			if got := status.Code(err); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
			if tc.note != nil && r != *tc.note {
				t.Errorf("note: got %+v; want %+v", r, *tc.note)
			}
			if r, err := g.checkReceived(rt, msg); status.Code(err) != codes.OK || r != (received{}) {
				t.Errorf("second check: got %+v, %v; want no note, OK (the note was taken)", r, err)
			}
		})
	}
}

// TestGuardCodecNotes: the codec records a message's size only from its type's recordFrom (over the
// smallest limit of its methods, or where the budget starts counting), refuses one over the
// largest limit of its type without decoding it, records every message protobuf-go decoded (the
// only ones that may hold unknown fields), and records nothing for a small message of a known type
// that the fast decoders decoded (the common call pays no table write).
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
	limits := typeLimits{largest: 200, smallest: 100, recordFrom: 101}
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
		{"one byte under recordFrom: no note", small, map[protoreflect.FullName]typeLimits{name: {largest: 200, smallest: 100, recordFrom: int64(small.Len()) + 1}}, false, false, false, codes.OK, true},
		{"at recordFrom: its size, decoded later", small, map[protoreflect.FullName]typeLimits{name: {largest: 200, smallest: 100, recordFrom: int64(small.Len())}}, true, true, false, codes.OK, true},
		{"between the smallest and the largest limit: its size, decoded later", mid, map[protoreflect.FullName]typeLimits{name: limits}, true, true, false, codes.OK, true},
		{"an unknown field: decoded by protobuf-go, noted", withUnknown, map[protoreflect.FullName]typeLimits{name: limits}, true, false, true, codes.OK, true},
		{"a type the codec has no limits for: noted", small, map[protoreflect.FullName]typeLimits{other: limits}, true, false, false, codes.OK, true},
		{"over the largest: refused, not decoded", large, map[protoreflect.FullName]typeLimits{name: limits}, true, false, false, codes.ResourceExhausted, false},
		{"not protobuf: refused by protobuf-go", mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x05, 0x01})}, map[protoreflect.FullName]typeLimits{name: limits}, true, false, true, codes.InvalidArgument, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCodec(jsonwire.New(jsonwire.Options{}))
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

// TestOpenCalls: the calls between the tap handle and an interceptor lose any member removed, and
// a sweep takes exactly the calls whose context has ended.
func TestOpenCalls(t *testing.T) {
	t.Parallel()
	o := openCalls{calls: map[*call]struct{}{}}
	ctxs := make([]context.CancelFunc, 4)
	calls := make([]*call, 4)
	for i := range calls {
		ctx, cancel := context.WithCancel(context.Background())
		calls[i], ctxs[i] = &call{ctx: ctx}, cancel
		o.add(calls[i])
	}
	members := func() map[*call]struct{} { return maps.Clone(o.calls) }
	o.remove(calls[1])
	o.remove(calls[3])
	o.remove(calls[3]) // twice: no harm
	if got := members(); len(got) != 2 || got[calls[2]] != struct{}{} || got[calls[0]] != struct{}{} {
		t.Fatalf("after removals: got %v; want calls 2 and 0", got)
	}
	if got := o.ended(time.Hour); len(got) != 0 {
		t.Fatalf("nothing ended: got %d calls", len(got))
	}
	ctxs[0]()
	if got := o.ended(time.Hour); len(got) != 1 || got[0] != calls[0] {
		t.Fatalf("call 0 ended: got %v; want call 0", got)
	}
	if got := members(); len(got) != 1 || got[calls[2]] != struct{}{} {
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
