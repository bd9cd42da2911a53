package serve

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// echoRecordOf is a record of the test service's batch: its rpc ("echo" or "shout") with text;
// "" for a record without a request.
func echoRecordOf(id, rpc, text string) *dynamicpb.Message {
	rec := dynamicpb.NewMessage(echoRecord)
	rec.Set(echoRecord.Fields().ByName("id"), protoreflect.ValueOfString(id))
	if rpc != "" {
		rec.Set(echoRecord.Fields().ByName(protoreflect.Name(rpc)), protoreflect.ValueOfMessage(echoRequest(text)))
	}
	return rec
}

// echoBatchAnswer is what a test reads of a batch answer: its id, its error (nil for none) and
// its response's text and client.
type echoBatchAnswer struct {
	id           string
	err          *batchv1.Status
	text, client string
}

func readAnswer(t *testing.T, ans *dynamicpb.Message) echoBatchAnswer {
	t.Helper()
	out := echoBatchAnswer{id: ans.Get(echoAnswer.Fields().ByName("id")).String()}
	if f := echoAnswer.Fields().ByName("error"); ans.Has(f) {
		b, err := proto.Marshal(ans.Get(f).Message().Interface())
		out.err = &batchv1.Status{}
		if err == nil {
			err = proto.Unmarshal(b, out.err)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if f := echoAnswer.Fields().ByName("echo_response"); ans.Has(f) {
		out.text, out.client = textOf(ans.Get(f).Message().Interface().(*dynamicpb.Message))
	}
	return out
}

// openEchoBatch opens the test service's batch stream with the token.
func openEchoBatch(ctx context.Context, h *harness, tok string) (grpc.ClientStream, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	return h.grpc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, throwawayBatch)
}

// recvAnswer reads the next answer of a batch stream.
func recvAnswer(st grpc.ClientStream) (*dynamicpb.Message, error) {
	ans := dynamicpb.NewMessage(echoAnswer)
	return ans, st.RecvMsg(ans)
}

// echoBatch sends records on the test service's batch stream with the token, reading as it
// sends, and returns the answers, the trailer and the stream's status.
func echoBatch(t *testing.T, h *harness, tok string, records []*dynamicpb.Message) ([]echoBatchAnswer, metadata.MD, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := openEchoBatch(ctx, h, tok)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		for _, r := range records {
			if st.SendMsg(r) != nil {
				return
			}
		}
		_ = st.CloseSend()
	}()
	var out []echoBatchAnswer
	for {
		a, err := recvAnswer(st)
		if errors.Is(err, io.EOF) {
			return out, st.Trailer(), nil
		}
		if err != nil {
			return out, st.Trailer(), err
		}
		out = append(out, readAnswer(t, a))
	}
}

// TestGRPCBatchRefusals: the stream takes a token with its batch permission, refused before any
// answer.
func TestGRPCBatchRefusals(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	for _, tc := range []struct {
		name, tok string
		code      codes.Code
	}{
		{"no token", "", codes.Unauthenticated},
		{"bad token", "x.y.z", codes.Unauthenticated},
		{"no batch permission", h.token("echo-only", clientSecret), codes.PermissionDenied},
	} {
		answers, _, err := echoBatch(t, h, tc.tok, []*dynamicpb.Message{echoRecordOf("a", "echo", "x")})
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
	h := startTestBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	answers, trailer, err := echoBatch(t, h, tok, []*dynamicpb.Message{
		echoRecordOf("ok", "echo", "x"), echoRecordOf("invalid", "echo", "invalid"), echoRecordOf("empty", "", ""),
		echoRecordOf("shout", "shout", "x"), echoRecordOf("panic", "echo", "panic"), echoRecordOf("ok2", "echo", "y"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    string
		code  codes.Code
		field string
	}{{"ok", codes.OK, ""}, {"invalid", codes.InvalidArgument, "items[0].result"}, {"empty", codes.InvalidArgument, "request"},
		{"shout", codes.PermissionDenied, ""}, {"panic", codes.Internal, ""}, {"ok2", codes.OK, ""}}
	if len(answers) != len(want) {
		t.Fatalf("%d answers; want %d", len(answers), len(want))
	}
	for i, w := range want {
		a := answers[i]
		if a.id != w.id {
			t.Errorf("answer %d: id %q; want %q", i, a.id, w.id)
		}
		if codes.Code(a.err.GetCode()) != w.code || (w.field != "" && !violates(a.err, w.field)) {
			t.Errorf("answer %s: %v; want %v %s", w.id, a.err, w.code, w.field)
		}
		if w.code == codes.OK && a.client != "batcher" {
			t.Errorf("answer %s: %+v; want the handler's answer for client batcher", w.id, a)
		}
	}
	// The details compared unpacked: their bytes vary with the order their maps were written in.
	if unary := h.echoUnaryStatus(tok, "panic"); !cmp.Equal(answers[4].err, rpcerr.Record(unary), protocmp.Transform()) {
		t.Errorf("panic: %v; unary %v", answers[4].err, unary)
	}
	for k, v := range map[string]string{TrailerRecords: "6", TrailerOK: "2", TrailerFailed: "4"} {
		if got := trailer.Get(k); len(got) != 1 || got[0] != v {
			t.Errorf("trailer %s = %v; want %s", k, got, v)
		}
	}
}

// echoUnaryStatus is the status of a unary Echo call of text.
func (h *harness) echoUnaryStatus(tok, text string) error {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	return h.grpc.Invoke(ctx, throwawayMethod, echoRequest(text), dynamicpb.NewMessage(echoOut))
}

// TestGRPCBatchNotAdmitted: a stream takes one admission for its life; with no room for a
// second, the second is refused RESOURCE_EXHAUSTED with RetryInfo, and unary calls go on.
func TestGRPCBatchNotAdmitted(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, func(c *Config) { c.MemoryBudget = 2 * admission.StreamReserve }) // room for one stream
	tok := h.token("batcher", clientSecret)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := openEchoBatch(ctx, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.SendMsg(echoRecordOf("a", "echo", "x")); err != nil {
		t.Fatal(err)
	}
	if a, err := recvAnswer(first); err != nil || readAnswer(t, a).id != "a" { // the answer comes with the stream open
		t.Fatalf("first stream: %v %v", a, err)
	}
	// Another client's stream finds the streams' half full (OVERLOADED); the same client's, its
	// own share full (THROTTLED): both RESOURCE_EXHAUSTED with RetryInfo.
	for _, tc := range []struct {
		tok        string
		overloaded bool
	}{{h.token("demo", "demo-secret"), true}, {tok, false}} {
		_, _, err = echoBatch(t, h, tc.tok, nil)
		info := errorInfoOf(err)
		if status.Code(err) != codes.ResourceExhausted || (info.GetReason() == rpcerr.ReasonOverloaded) != tc.overloaded ||
			(!tc.overloaded && info.GetMetadata()[rpcerr.ExceptionKey] != rpcerr.ExceptionThrottled) || retryOf(err) != time.Second {
			t.Errorf("second stream: %v (%v); want RESOURCE_EXHAUSTED with RetryInfo, overloaded %v", err, info, tc.overloaded)
		}
	}
	if err := h.echoUnaryStatus(tok, "x"); err != nil {
		t.Errorf("unary call beside a stream: %v", err)
	}
}

// TestGRPCBatchCallerReadsNothing: a caller that sends 200,000 records and reads no answer holds
// at most the records in flight: the server stops reading (gRPC's flow control then stops the
// caller); the heap stays bounded; and once the caller goes away the work stops within a second
// and the stream's admission is given back.
func TestGRPCBatchCallerReadsNothing(t *testing.T) {
	h := startTestBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := openEchoBatch(ctx, h, tok)
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
			if st.SendMsg(echoRecordOf("r", "echo", "x")) != nil {
				break
			}
		}
		sent <- n
	}()
	// The calls stop growing: the server has stopped reading. Unchanged for four looks in a row
	// (1.2 s), not one: on a loaded machine a starved server can look still for 300 ms.
	var calls int64
	deadline := time.Now().Add(20 * time.Second)
	for still := 0; still < 4; {
		time.Sleep(300 * time.Millisecond)
		c := h.echo.calls.Load()
		if c == calls && c > 0 {
			still++
		} else {
			still = 0
		}
		calls = c
		if time.Now().After(deadline) {
			t.Fatalf("the server still reads after 20 s: %d records run", c)
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
	for admitted(t, h) != 0 && time.Now().Before(left) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := admitted(t, h); a != 0 {
		t.Errorf("a second after the caller left, %d bytes are still admitted: the stream goes on", a)
	}
	if c := h.echo.calls.Load(); c != calls {
		t.Errorf("records run after the caller left: %d, then %d", calls, c)
	}
}
