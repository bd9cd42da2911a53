package serve

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/dynamicpb"
)

// TestStreamRecordsWithinConcurrency: a stream of a client limited to concurrency 1 runs one
// record at a time, on NDJSON and gRPC alike, however fast its rate lets the records in: the
// second "slow" record starts only once the first has ended. With concurrency 2 (the boundary's
// other side) two run at once.
func TestStreamRecordsWithinConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, front string
		conc        int
	}{
		{"NDJSON, concurrency 1", "ndjson", 1},
		{"gRPC, concurrency 1", "grpc", 1},
		{"NDJSON, concurrency 2", "ndjson", 2},
		{"gRPC, concurrency 2", "grpc", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startTestBatch(t, nil)
			h.echo.started = make(chan struct{}, 4)
			// The stream holds one of the client's places; its records run within the client's
			// concurrency.
			if err := setLimits(t, h, fmt.Sprintf("{rate: 50, burst: 2, concurrency: %d}", tc.conc)); err != nil {
				t.Fatal(err)
			}
			tok := h.token("batcher", clientSecret)
			done := make(chan struct{})
			go func() {
				defer close(done)
				switch tc.front {
				case "ndjson":
					body := strings.Repeat(`{"id":"s","path":"`+throwawayPath+`","body":{"text":"slow"}}`+"\n", 2)
					r := h.do(http.MethodPost, throwawayBatchPath, ndjson, body, "Authorization", "Bearer "+tok)
					if r.status != 200 || !strings.Contains(string(r.body), `{"summary":{"records":2,"ok":2,"failed":0}}`) {
						t.Errorf("NDJSON: got %d %s; want both records 200", r.status, r.body)
					}
				case "grpc":
					answers, _, err := echoBatch(t, h, tok, []*dynamicpb.Message{echoRecordOf("1", "echo", "slow"), echoRecordOf("2", "echo", "slow")})
					if err != nil || len(answers) != 2 {
						t.Errorf("gRPC: got %d answers, %v; want 2", len(answers), err)
					}
				}
			}()
			<-h.echo.started
			select {
			case <-h.echo.started:
				if tc.conc == 1 {
					t.Fatal("a second record started while the first ran; want one at a time")
				}
			case <-time.After(300 * time.Millisecond):
				if tc.conc == 2 {
					t.Fatal("the second record did not start beside the first; want two at once")
				}
			}
			h.echo.release <- struct{}{}
			if tc.conc == 1 {
				<-h.echo.started // the second, now the first has ended
			}
			h.echo.release <- struct{}{}
			<-done
		})
	}
}
