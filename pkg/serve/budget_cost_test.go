package serve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// heapGrowth is the heap do allocates, with the garbage collector off so that nothing it
// allocates is freed before it is counted.
func heapGrowth(do func()) uint64 {
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	do()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// discardWriter is a ResponseWriter that keeps nothing of the answer (a recorder's buffer would
// count as the request's heap).
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// Shapes of group requests: as callers send them, the shortest valid students, invalid values
// (answered 400 after the handler's validation) and empty students (400 too; the most students a
// byte can carry).
var groupShapes = []struct {
	name    string
	student func(int) string
	proto   func(int) *forecastv1.StudentData
	status  int
}{
	{"typical", typicalStudent, func(i int) *forecastv1.StudentData {
		return &forecastv1.StudentData{PriorAbility: proto.Float64(float64(200 + i%900)), PriorUncertainty: proto.Float64(float64(40 + i%50)), ElapsedDays: proto.Float64(float64(i % 365))}
	}, http.StatusOK},
	{"shortest", func(int) string { return `{"priorAbility":1,"priorUncertainty":1,"elapsedDays":1}` }, nil, http.StatusOK},
	{"out-of-range", func(int) string { return `{"priorAbility":1e9,"priorUncertainty":-1,"elapsedDays":-1}` }, nil, http.StatusBadRequest},
	{"empty", func(int) string { return `{}` }, func(int) *forecastv1.StudentData { return &forecastv1.StudentData{} }, http.StatusBadRequest},
	// The compact form: [priorAbility, priorUncertainty, elapsedDays].
	{"array", func(i int) string { return fmt.Sprintf("[%d,%d,%d]", 200+i%900, 40+i%50, i%365) }, nil, http.StatusOK},
	{"shortest array", func(int) string { return `[1,1,1]` }, nil, http.StatusOK},
}

// TestCostCoversHeapGrowth: the budget's estimate of a group forecast is at least the heap the
// request really allocates, through the JSON front (in-process; from its size alone, the bound,
// and from its brackets once it is read, what is admitted) and over gRPC (loopback), for 1,000, 10,000 and 100,000
// students of every shape, objects and compact arrays; and once the body is read, for typical
// students of 10,000 and more it is not more than twice it, so the budget is not wasted.
func TestCostCoversHeapGrowth(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures mean nothing under -race; make test runs this test without it")
	}
	cfg := forecastConfig(t)
	fake := newFakeForecast(t, limitsOf(cfg))
	h := startService(t, cfg, fake.service())
	tok := h.token("demo", "demo-secret")
	method := forecastv1.ForecastService_ForecastReadingGroup_FullMethodName
	handler := h.srv.Handler()

	for _, shape := range groupShapes {
		for _, n := range []int{1000, 10000, 100000} {
			body := groupBody(n, shape.student)
			t.Run(fmt.Sprintf("json/%s/%d", shape.name, n), func(t *testing.T) {
				call := func() *discardWriter {
					req, _ := http.NewRequest(http.MethodPost, "/api/forecast/reading/group", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+tok)
					w := &discardWriter{header: http.Header{}}
					handler.ServeHTTP(w, req)
					return w
				}
				if w := call(); w.code != 0 && w.code != shape.status { // warm: pools, plans, token cache
					t.Fatalf("status: got %d; want %d", w.code, shape.status)
				}
				grew := heapGrowth(func() { call() })
				est := h.srv.Cost(method, int64(len(body)), true)
				read := h.srv.budget.GroupCostOfBody(body)
				t.Logf("body %d B, heap %d B (%.1f per byte), estimate %d B before the read (%.2f of the heap), %d B after (%.2f)",
					len(body), grew, float64(grew)/float64(len(body)), est, float64(est)/float64(grew), read, float64(read)/float64(grew))
				if est < int64(grew) || read < int64(grew) {
					t.Errorf("estimates: got %d before the read, %d after; want each at least the heap growth %d", est, read, grew)
				}
				if read > est {
					t.Errorf("estimate after the read: got %d; want at most the size's bound (%d)", read, est)
				}
				if (shape.name == "typical" || shape.name == "array") && n >= 10000 && read > 2*int64(grew) {
					t.Errorf("estimate after the read: got %d; want at most twice the heap growth %d", read, grew)
				}
			})
		}
	}

	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	for _, shape := range groupShapes {
		if shape.proto == nil {
			continue
		}
		for _, n := range []int{1000, 10000, 100000} {
			req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(30), CutLevels: []float64{400, 600, 800}}
			for i := range n {
				req.StudentData = append(req.StudentData, shape.proto(i))
			}
			wire, err := proto.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("grpc/%s/%d", shape.name, n), func(t *testing.T) {
				call := func() error {
					var out []byte
					return h.grpc.Invoke(ctx, method, wire, &out, grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(64<<20))
				}
				_ = call() // warm
				grew := heapGrowth(func() { _ = call() })
				est := h.srv.Cost(method, int64(len(wire)), false)
				t.Logf("message %d B, heap %d B (%.1f per byte, client included), estimate %d B (%.2f of the heap)", len(wire), grew, float64(grew)/float64(len(wire)), est, float64(est)/float64(grew))
				if est < int64(grew) {
					t.Errorf("estimate: got %d; want at least the heap growth %d", est, grew)
				}
				if shape.name == "typical" && n == 100000 && est > 2*int64(grew) {
					t.Errorf("estimate: got %d; want at most twice the heap growth %d", est, grew)
				}
			})
		}
	}
}

// rawCodec sends and receives messages already encoded, so that the client's own work adds
// little to the heap measured (its copy of the answer still counts, which errs on the safe side).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append((*v.(*[]byte))[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }
