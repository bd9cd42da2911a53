package scoring

import (
	"context"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// BenchmarkGRPCDoor is make bench-e2e's gRPC request (40 difficulties, Bayes) over loopback from
// eight callers on one connection: "frame" through the whole gRPC door, "plain" on a plain grpc-go
// server with gRPC's own codec and no interceptor around the same handler (bench/baregrpc's
// setting). Besides time it reports cpu-µs/op, the process's CPU (server and client) per call,
// which a shared machine's load changes less than time.
func BenchmarkGRPCDoor(b *testing.B) {
	req := difficulties40Request()
	b.Run("frame", func(b *testing.B) {
		s := benchServer(b)
		callInParallel(b, scoringv1.NewScoringServiceClient(s.Conn), s.Authed(context.Background()), req)
	})
	b.Run("plain", func(b *testing.B) {
		content, err := measure.OpenLive("")
		if err != nil {
			b.Fatal(err)
		}
		srv := grpc.NewServer()
		limits := LimitsOf(benchServer(b).Config) // the frame's, idle
		scoringv1.RegisterScoringServiceServer(srv, New(content, limits, slog.New(slog.NewTextHandler(io.Discard, nil))))
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = srv.Serve(lis) }()
		b.Cleanup(srv.Stop)
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		callInParallel(b, scoringv1.NewScoringServiceClient(conn), context.Background(), req)
	})
}

func callInParallel(b *testing.B, client scoringv1.ScoringServiceClient, ctx context.Context, req *scoringv1.ScoreDifficultiesBayesRequest) {
	for range 100 { // the connection's windows and the caches warm
		if _, err := client.ScoreDifficultiesBayes(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetParallelism(4)
	cpu := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.ScoreDifficultiesBayes(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// difficulties40Request is make bench-e2e's gRPC request (bench/e2e's scoreBody).
func difficulties40Request() *scoringv1.ScoreDifficultiesBayesRequest {
	ptr := func(v float64) *float64 { return &v }
	nc, fw := int32(22), "lexile"
	req := &scoringv1.ScoreDifficultiesBayesRequest{NumberCorrect: &nc, Framework: &fw, PriorAbility: ptr(700), PriorUncertainty: ptr(70), ElapsedDays: ptr(120)}
	for i := range 40 {
		req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: ptr(500 + 10*float64(i))})
	}
	return req
}
