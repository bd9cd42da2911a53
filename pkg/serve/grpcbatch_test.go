package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

func itemsRecord(id, item string) *scoringv1.ScoreBatchRecord {
	return &scoringv1.ScoreBatchRecord{Id: id, Request: &scoringv1.ScoreBatchRecord_ScoreItemResults{
		ScoreItemResults: &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: proto.String(item), Result: proto.Int32(1)}}}}}
}

// scoreBatch sends records on a ScoreBatch stream with the token, reading as it sends, and
// returns the answers, the trailer and the stream's status.
func scoreBatch(t *testing.T, h *harness, tok string, records []*scoringv1.ScoreBatchRecord) ([]*scoringv1.ScoreBatchAnswer, metadata.MD, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok), time.Minute)
	defer cancel()
	st, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreBatch(ctx)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		for _, r := range records {
			if st.Send(r) != nil {
				return
			}
		}
		_ = st.CloseSend()
	}()
	var out []*scoringv1.ScoreBatchAnswer
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, st.Trailer(), nil
		}
		if err != nil {
			return out, st.Trailer(), err
		}
		out = append(out, a)
	}
}

// TestGRPCBatchRefusals: the stream takes a token with score:batch, refused before any answer.
func TestGRPCBatchRefusals(t *testing.T) {
	t.Parallel()
	h := startBatch(t, nil)
	for _, tc := range []struct {
		name, tok string
		code      codes.Code
	}{
		{"no token", "", codes.Unauthenticated},
		{"bad token", "x.y.z", codes.Unauthenticated},
		{"no score:batch", h.token("standard-only", clientSecret), codes.PermissionDenied},
	} {
		answers, _, err := scoreBatch(t, h, tc.tok, []*scoringv1.ScoreBatchRecord{itemsRecord("a", "x")})
		if status.Code(err) != tc.code || len(answers) != 0 {
			t.Errorf("%s: %v after %d answers; want %v before any", tc.name, err, len(answers), tc.code)
		}
	}
}

// TestGRPCBatchRecords: records answered in order with their ids, each as its unary call with
// the stream's token: an answer, its own validation error, a record without a request, a
// record of an rpc the token lacks, a handler's panic; the stream goes on after each; the
// trailer counts them.
func TestGRPCBatchRecords(t *testing.T) {
	t.Parallel()
	h := startBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	bayes := &scoringv1.ScoreBatchRecord{Id: "bayes", Request: &scoringv1.ScoreBatchRecord_ScoreItemResultsBayes{ScoreItemResultsBayes: &scoringv1.ScoreItemResultsBayesRequest{}}}
	answers, trailer, err := scoreBatch(t, h, tok, []*scoringv1.ScoreBatchRecord{
		itemsRecord("ok", "x"), itemsRecord("invalid", "invalid"), {Id: "empty"}, bayes, itemsRecord("panic", "panic"), itemsRecord("ok2", "y"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    string
		code  codes.Code
		field string
	}{{"ok", codes.OK, ""}, {"invalid", codes.InvalidArgument, "items[0].result"}, {"empty", codes.InvalidArgument, "request"},
		{"bayes", codes.PermissionDenied, ""}, {"panic", codes.Internal, ""}, {"ok2", codes.OK, ""}}
	if len(answers) != len(want) {
		t.Fatalf("%d answers; want %d", len(answers), len(want))
	}
	for i, w := range want {
		a := answers[i]
		if a.GetId() != w.id {
			t.Errorf("answer %d: id %q; want %q", i, a.GetId(), w.id)
		}
		got := a.GetError()
		if codes.Code(got.GetCode()) != w.code || (w.field != "" && !violates(got, w.field)) {
			t.Errorf("answer %s: %v; want %v %s", w.id, got, w.code, w.field)
		}
		if w.code == codes.OK && a.GetMeasure().GetApiVersion() != "batcher" {
			t.Errorf("answer %s: %v; want the fake's measure for client batcher", w.id, a)
		}
	}
	// The details compared unpacked: their bytes vary with the order their maps were written in.
	if unary := h.grpcUnaryStatus(tok, "panic"); !cmp.Equal(answers[4].GetError(), rpcerr.Record(unary), protocmp.Transform()) {
		t.Errorf("panic: %v; unary %v", answers[4].GetError(), unary)
	}
	for k, v := range map[string]string{TrailerRecords: "6", TrailerOK: "2", TrailerFailed: "4"} {
		if got := trailer.Get(k); len(got) != 1 || got[0] != v {
			t.Errorf("trailer %s = %v; want %s", k, got, v)
		}
	}
}

// grpcUnaryStatus is the status of a unary ScoreItemResults call with one item id.
func (h *harness) grpcUnaryStatus(tok, item string) error {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	_, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreItemResults(ctx, itemsRecord("", item).GetScoreItemResults())
	return err
}

// TestGRPCBatchNotAdmitted: a stream takes one admission for its life; with no room for a
// second, the second is refused RESOURCE_EXHAUSTED with RetryInfo, and unary calls go on.
func TestGRPCBatchNotAdmitted(t *testing.T) {
	t.Parallel()
	h := startBatch(t, func(c *Config) { c.MemoryBudget = 2 * admission.StreamReserve }) // room for one stream
	tok := h.token("batcher", clientSecret)
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok))
	defer cancel()
	first, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Send(itemsRecord("a", "x")); err != nil {
		t.Fatal(err)
	}
	if a, err := first.Recv(); err != nil || a.GetId() != "a" { // the answer comes with the stream open
		t.Fatalf("first stream: %v %v", a, err)
	}
	// Another client's stream finds the streams' half full (OVERLOADED); the same client's, its
	// own share full (THROTTLED): both RESOURCE_EXHAUSTED with RetryInfo.
	for _, tc := range []struct {
		tok        string
		overloaded bool
	}{{h.token("demo", "demo-secret"), true}, {tok, false}} {
		_, _, err = scoreBatch(t, h, tc.tok, nil)
		info := errorInfoOf(err)
		if status.Code(err) != codes.ResourceExhausted || (info.GetReason() == rpcerr.ReasonOverloaded) != tc.overloaded ||
			(!tc.overloaded && info.GetMetadata()[rpcerr.ExceptionKey] != rpcerr.ExceptionThrottled) || retryOf(err) != time.Second {
			t.Errorf("second stream: %v (%v); want RESOURCE_EXHAUSTED with RetryInfo, overloaded %v", err, info, tc.overloaded)
		}
	}
	if err := h.grpcUnaryStatus(tok, "x"); err != nil {
		t.Errorf("unary call beside a stream: %v", err)
	}
}

// TestGRPCBatchCallerReadsNothing: a caller that sends 200,000 records and reads no answer holds
// at most the records in flight: the server stops reading (gRPC's flow control then stops the
// caller); the heap stays bounded; and once the caller goes away the work stops within a second
// and the stream's admission is given back.
func TestGRPCBatchCallerReadsNothing(t *testing.T) {
	h := startBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok))
	st, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sent := make(chan int, 1)
	go func() {
		n := 0
		for ; n < 200000; n++ {
			if st.Send(itemsRecord("r", "x")) != nil {
				break
			}
		}
		sent <- n
	}()
	// The calls stop growing: the server has stopped reading.
	var calls int64
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond)
		c := h.fake.calls.Load()
		if c == calls && c > 0 {
			break
		}
		calls = c
		if time.Now().After(deadline) {
			t.Fatalf("the server still reads after 10 s: %d records run", c)
		}
	}
	// 16 records in flight, and those whose answers fill gRPC's send window and the client's
	// receive window (a 40-byte answer: a few thousand); far from 200,000.
	t.Logf("%d records run for a caller that reads nothing", calls)
	if calls > 20000 {
		t.Errorf("%d records run for a caller that reads nothing; want the server to stop reading", calls)
	}
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	if grown := int64(during.HeapInuse) - int64(before.HeapInuse); grown > 64<<20 {
		t.Errorf("heap grew %d MiB", grown>>20)
	}
	select {
	case n := <-sent:
		t.Fatalf("the caller sent all it had (%d) though nothing was read", n)
	default:
	}
	cancel()
	<-sent
	left := time.Now().Add(time.Second)
	for h.srv.budget.Admitted() != 0 && time.Now().Before(left) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := h.srv.budget.Admitted(); a != 0 {
		t.Errorf("a second after the caller left, %d bytes are still admitted: the stream goes on", a)
	}
	if c := h.fake.calls.Load(); c != calls {
		t.Errorf("records run after the caller left: %d, then %d", calls, c)
	}
}

// TestGRPCBatchIdle: a batch stream with no message in and no answer out for its idle limit
// ends DEADLINE_EXCEEDED and gives its admission back: one that sends nothing, and one that
// sent its records and takes no answer. A caller that takes its answers slowly, each within the
// limit, gets them all.
func TestGRPCBatchIdle(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	h := startBatch(t, nil)
	h.srv.guard.SetStreamIdle(idle)
	tok := h.token("batcher", clientSecret)
	open := func() (scoringv1.ScoringService_ScoreBatchClient, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok), 30*time.Second)
		st, err := scoringv1.NewScoringServiceClient(h.grpc).ScoreBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st, cancel
	}
	lastStatus := func(st scoringv1.ScoringService_ScoreBatchClient) (int, error) {
		n := 0
		for {
			if _, err := st.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					return n, nil
				}
				return n, err
			}
			n++
		}
	}
	t.Run("sends nothing", func(t *testing.T) {
		st, cancel := open()
		defer cancel()
		start := time.Now()
		if _, err := lastStatus(st); status.Code(err) != codes.DeadlineExceeded || time.Since(start) < idle {
			t.Errorf("after %s: %v; want DEADLINE_EXCEEDED after %s", time.Since(start), err, idle)
		}
	})
	t.Run("takes no answer", func(t *testing.T) {
		// The stream's log line: cut off with records read (the stream that sent nothing read none).
		cutOff := regexp.MustCompile(`"code":"DeadlineExceeded"[^\n]*"records":[1-9]`)
		st, cancel := open()
		defer cancel()
		go func() { // until the server stops reading and gRPC's flow control stops this
			for i := range 200000 {
				if st.Send(itemsRecord(strconv.Itoa(i), "x")) != nil {
					return
				}
			}
		}()
		// Blocked in a send, the handler cannot return: the call is cut off a grace after the
		// limit (the caller, reading at last, finds CANCELLED; the log line says why). When the
		// stall begins depends on how fast the flow-control windows fill, so the test waits for
		// the log line rather than a fixed time: reading the answers earlier would end the stall.
		deadline := time.Now().Add(20 * time.Second)
		for !cutOff.MatchString(h.logs.String()) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !cutOff.MatchString(h.logs.String()) {
			t.Errorf("no log line says the stream was cut off (DeadlineExceeded, records read):\n%s", h.logs.String())
		}
		n, err := lastStatus(st)
		if c := status.Code(err); c != codes.DeadlineExceeded && c != codes.Canceled {
			t.Errorf("after %d answers: %v; want the stream cut off", n, err)
		}
	})
	t.Run("slow reader within the limit", func(t *testing.T) {
		st, cancel := open()
		defer cancel()
		for i := range 5 {
			if err := st.Send(itemsRecord(strconv.Itoa(i), "x")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(idle / 2) // the stream is idle less than its limit at a time, longer in all
		}
		_ = st.CloseSend()
		n := 0
		for {
			_, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("after %d answers: %v", n, err)
			}
			n++
			time.Sleep(idle / 2)
		}
		if n != 5 {
			t.Errorf("%d answers; want 5", n)
		}
	})
	deadline := time.Now().Add(2 * time.Second)
	for h.srv.budget.Admitted() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := h.srv.budget.Admitted(); a != 0 {
		t.Errorf("%d bytes still admitted after the idle streams ended", a)
	}
}

// TestGRPCBatchRefusedMessage: a message the door refuses ends the stream with the status a
// unary call's message would get (a field the server does not know: INVALID_ARGUMENT naming its
// number, after the answers to the records before it; over the limit: RESOURCE_EXHAUSTED, which
// grpc-go answers itself, resetting the stream: answers still in flight may be lost, and the
// caller resumes after the last it got).
func TestGRPCBatchRefusedMessage(t *testing.T) {
	t.Parallel()
	h := startBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	unknown := itemsRecord("b", "x")
	unknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	huge := itemsRecord("c", "x")
	for range 90000 { // 13 bytes an item
		huge.GetScoreItemResults().Items = append(huge.GetScoreItemResults().Items, &scoringv1.ItemResult{Id: proto.String("L000001"), Result: proto.Int32(1)})
	}
	for _, tc := range []struct {
		name     string
		bad      *scoringv1.ScoreBatchRecord
		code     codes.Code
		in       string
		mayLoseA bool
	}{
		{"unknown field", unknown, codes.InvalidArgument, "99", false},
		{"over 1 MiB", huge, codes.ResourceExhausted, "", true},
	} {
		answers, _, err := scoreBatch(t, h, tok, []*scoringv1.ScoreBatchRecord{itemsRecord("a", "x"), tc.bad, itemsRecord("d", "x")})
		if status.Code(err) != tc.code || !strings.Contains(fmt.Sprint(status.Convert(err).Details(), err), tc.in) {
			t.Errorf("%s: %v; want %v naming %q", tc.name, err, tc.code, tc.in)
		}
		if (len(answers) != 1 || answers[0].GetId() != "a") && !(tc.mayLoseA && len(answers) == 0) {
			t.Errorf("%s: answers %v; want the first record's alone", tc.name, answers)
		}
	}
}

// violates reports whether a batch answer's error has a google.rpc.BadRequest violation of the
// field at path.
func violates(s *batchv1.Status, path string) bool {
	for _, d := range s.GetDetails() {
		var br errdetails.BadRequest
		if d.UnmarshalTo(&br) == nil && slices.ContainsFunc(br.GetFieldViolations(), func(v *errdetails.BadRequest_FieldViolation) bool { return v.GetField() == path }) {
			return true
		}
	}
	return false
}
