package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

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
