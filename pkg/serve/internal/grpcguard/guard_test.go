package grpcguard

import (
	"context"
	"maps"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

const mib = 1 << 20

// TestOpenCalls: the calls between the tap handle and an interceptor lose any member removed, and
// a sweep takes exactly the calls whose context has ended.
func TestOpenCalls(t *testing.T) {
	t.Parallel()
	o := &Guard{open: map[*call]struct{}{}}
	ctxs := make([]context.CancelFunc, 4)
	calls := make([]*call, 4)
	for i := range calls {
		ctx, cancel := context.WithCancel(context.Background())
		calls[i], ctxs[i] = &call{ctx: ctx, start: time.Now(), cancel: cancel}, cancel
		o.open[calls[i]] = struct{}{}
	}
	members := func() map[*call]struct{} { return maps.Clone(o.open) }
	o.markLogged(calls[1])
	o.markLogged(calls[3])
	o.markLogged(calls[3]) // twice: no harm
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
	calls[2].start = time.Now().Add(-2 * time.Second)
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
