package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
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

// TestGRPCBatchIdle: a batch stream with no message in and no answer out for its idle limit
// (YARDSTICK_BATCH_IDLE) ends DEADLINE_EXCEEDED and gives its admission back: one that sends
// nothing, and one that sent its records and takes no answer. A caller that takes its answers
// slowly, each within the limit, gets them all.
func TestGRPCBatchIdle(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	h := startTestBatch(t, func(c *Config) { c.BatchIdle = idle })
	tok := h.token("batcher", clientSecret)
	open := func() (grpc.ClientStream, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := openEchoBatch(ctx, h, tok)
		if err != nil {
			t.Fatal(err)
		}
		return st, cancel
	}
	lastStatus := func(st grpc.ClientStream) (int, error) {
		n := 0
		for {
			if _, err := recvAnswer(st); err != nil {
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
				if st.SendMsg(echoRecordOf(strconv.Itoa(i), "echo", "x")) != nil {
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
			if err := st.SendMsg(echoRecordOf(strconv.Itoa(i), "echo", "x")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(idle / 2) // the stream is idle less than its limit at a time, longer in all
		}
		_ = st.CloseSend()
		n := 0
		for {
			_, err := recvAnswer(st)
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
	for admitted(t, h) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := admitted(t, h); a != 0 {
		t.Errorf("%d bytes still admitted after the idle streams ended", a)
	}
}

// TestNDJSONBatchIdle: YARDSTICK_BATCH_IDLE is the NDJSON streams' idle limit too: a stream that
// sends nothing is ended after it, without a summary.
func TestNDJSONBatchIdle(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	h := startTestBatch(t, func(c *Config) { c.BatchIdle = idle })
	tok := h.token("batcher", clientSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+throwawayBatchPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjson)
	req.Header.Set("Authorization", "Bearer "+tok)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body) // cut off: the body may end without its last chunk
	if took := time.Since(start); resp.StatusCode != http.StatusOK || took < idle || took > idle+5*time.Second || strings.Contains(string(body), "summary") {
		t.Errorf("after %s: %d %q; want 200 ended after %s without a summary", took, resp.StatusCode, body, idle)
	}
}

// TestBatchIdleBounds pins YARDSTICK_BATCH_IDLE: 60 s by default, 100 ms to 1 h, both sides of
// each bound.
func TestBatchIdleBounds(t *testing.T) {
	t.Parallel()
	idleIs := func(want time.Duration) func(t *testing.T, c Config) {
		return func(t *testing.T, c Config) {
			if c.BatchIdle != want {
				t.Errorf("batch idle: got %s; want %s", c.BatchIdle, want)
			}
		}
	}
	runLoadCases(t, []loadCase{
		{name: "default", service: "scoring", env: []string{"YARDSTICK_DEV=true"}, check: idleIs(60 * time.Second)},
		{name: "lower bound", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_BATCH_IDLE=100ms"}, check: idleIs(100 * time.Millisecond)},
		{name: "upper bound", service: "forecast", env: []string{"YARDSTICK_DEV=true"}, args: []string{"-batch-idle", "1h"}, check: idleIs(time.Hour)},
		{name: "under the lower bound", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_BATCH_IDLE=99ms"},
			wantErr: []string{"YARDSTICK_BATCH_IDLE 99ms: want 100ms to 1h"}},
		{name: "past the upper bound", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_BATCH_IDLE=1h0m0.001s"},
			wantErr: []string{"YARDSTICK_BATCH_IDLE 1h0m0.001s: want 100ms to 1h"}},
	})
}

// TestGRPCBatchRefusedMessage: a message the door refuses ends the stream with the status a
// unary call's message would get (a field the server does not know: INVALID_ARGUMENT naming its
// number, after the answers to the records before it; over the limit: RESOURCE_EXHAUSTED, which
// grpc-go answers itself, resetting the stream: answers still in flight may be lost, and the
// caller resumes after the last it got).
func TestGRPCBatchRefusedMessage(t *testing.T) {
	t.Parallel()
	h := startTestBatch(t, nil)
	tok := h.token("batcher", clientSecret)
	unknown := echoRecordOf("b", "echo", "x")
	unknown.SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	huge := echoRecordOf("c", "echo", "x")
	items := make([]any, 0, 2*90000)
	for range 90000 { // 13 bytes an item
		items = append(items, "L000001", 1)
	}
	huge.Set(echoRecord.Fields().ByName("echo"), protoreflect.ValueOfMessage(echoRequest("x", items...)))
	for _, tc := range []struct {
		name     string
		bad      *dynamicpb.Message
		code     codes.Code
		in       string
		mayLoseA bool
	}{
		{"unknown field", unknown, codes.InvalidArgument, "99", false},
		{"over 1 MiB", huge, codes.ResourceExhausted, "", true},
	} {
		answers, _, err := echoBatch(t, h, tok, []*dynamicpb.Message{echoRecordOf("a", "echo", "x"), tc.bad, echoRecordOf("d", "echo", "x")})
		if status.Code(err) != tc.code || !strings.Contains(fmt.Sprint(status.Convert(err).Details(), err), tc.in) {
			t.Errorf("%s: %v; want %v naming %q", tc.name, err, tc.code, tc.in)
		}
		if (len(answers) != 1 || answers[0].id != "a") && !(tc.mayLoseA && len(answers) == 0) {
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
