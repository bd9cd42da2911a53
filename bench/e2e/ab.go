package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"sync/atomic"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
	"github.com/yardstick-dev/yardstick/internal/proc"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// An A/B run measures two scoring servers in the same interleaved windows (so whatever else the
// machine does weighs on both alike) and reports B's CPU per request over A's, on the JSON front
// and over gRPC. -ab-bin DIR: A is DIR/scoring (a build without the change), B is -bin's, as
// configured by default. -ab-tracing: A and B are both -bin's scoring, B exporting every span
// (OTEL_TRACES_SAMPLER=always_on) to an OTLP receiver in this process; with -ab-bin too, A is
// DIR/scoring and both export (a change to the spans, measured with tracing on).

// abFigures are one A/B run's CPU seconds per request.
type abFigures struct{ jsonA, jsonB, grpcA, grpcB float64 }

// spanSink is an OTLP trace receiver that counts what it is sent.
type spanSink struct {
	collectortrace.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (s *spanSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			s.spans.Add(int64(len(ss.GetSpans())))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// startScoring starts a scoring binary in dev mode with env and returns it with its token.
func startScoring(ctx context.Context, bin string, env []string) (p *procs.Proc, httpAddr, grpcAddr, tok string, err error) {
	httpAddr, _ = proc.FreePort()
	grpcAddr, _ = proc.FreePort()
	env = append([]string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=" + httpAddr, "YARDSTICK_GRPC_ADDR=" + grpcAddr}, env...)
	if p, err = procs.Start(ctx, bin, nil, env, httpAddr, procs.HTTPReady("http://"+httpAddr+"/readyz")); err != nil {
		return nil, "", "", "", err
	}
	if tok, err = token(httpAddr); err != nil {
		p.Stop()
		return nil, "", "", "", err
	}
	return p, httpAddr, grpcAddr, tok, nil
}

func measureAB(ctx context.Context, o options, sink *spanSink, sinkAddr string) (abFigures, error) {
	var f abFigures
	body, grpcReq := scoreBody()
	aBin, bBin, aEnv, bEnv := filepath.Join(o.abBin, "scoring"), filepath.Join(o.bin, "scoring"), []string(nil), []string(nil)
	if o.abTracing {
		bEnv = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + sinkAddr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
			"OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_TRACES_SAMPLER=always_on"}
		if o.abBin == "" {
			aBin = bBin
		} else {
			aEnv = bEnv // with -ab-bin: both export, the reference build's spans against this one's
		}
	}
	if o.abLimits {
		// Far above what 8 connections can send: every call is admitted, and pays for the check.
		aBin = bBin
		bEnv = []string{"YARDSTICK_CLIENT_RATE=10000000", "YARDSTICK_CLIENT_CONCURRENCY=100000"}
		if o.abRedis != "" {
			bEnv = append(bEnv, "YARDSTICK_REDIS_URL="+o.abRedis)
		}
	}
	type side struct {
		proc       *procs.Proc
		json, grpc *window
	}
	var sides [2]side
	for i, s := range []struct {
		bin string
		env []string
	}{{aBin, aEnv}, {bBin, bEnv}} {
		p, httpAddr, grpcAddr, tok, err := startScoring(ctx, s.bin, s.env)
		if err != nil {
			return f, err
		}
		defer p.Stop()
		clients := httpClients(o.conns)
		grpcClients := make([]scoringv1.ScoringServiceClient, o.conns)
		for w := range grpcClients {
			conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return f, err
			}
			defer conn.Close()
			grpcClients[w] = scoringv1.NewScoringServiceClient(conn)
		}
		authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
		sides[i] = side{proc: p,
			json: &window{proc: p, call: func(w int) error {
				_, err := post(clients[w], "http://"+httpAddr+scorePath, body, "Authorization", "Bearer "+tok)
				return err
			}},
			grpc: &window{proc: p, call: func(w int) error {
				_, err := grpcClients[w].ScoreDifficultiesBayes(authed, grpcReq)
				return err
			}},
		}
	}
	before := int64(0)
	if sink != nil {
		before = sink.spans.Load()
	}
	if err := interleave(ctx, o, sides[0].json, sides[1].json, sides[0].grpc, sides[1].grpc); err != nil {
		return f, err
	}
	if o.abTracing {
		sides[1].proc.Stop() // flushes its spans
		if sink.spans.Load() == before {
			return f, fmt.Errorf("tracing on: the receiver got no span")
		}
	}
	f.jsonA, f.jsonB = sides[0].json.cpu/float64(sides[0].json.n), sides[1].json.cpu/float64(sides[1].json.n)
	f.grpcA, f.grpcB = sides[0].grpc.cpu/float64(sides[0].grpc.n), sides[1].grpc.cpu/float64(sides[1].grpc.n)
	return f, nil
}

// runAB runs the A/B o.runs times and reports the medians; with -ab-bin, B's CPU per request
// over A's must be at most abLimit on both fronts.
func runAB(ctx context.Context, o options) error {
	var sink *spanSink
	sinkAddr := ""
	if o.abTracing {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sink = &spanSink{}
		gs := grpc.NewServer()
		collectortrace.RegisterTraceServiceServer(gs, sink)
		go gs.Serve(l)
		defer gs.Stop()
		sinkAddr = l.Addr().String()
	}
	var jsonR, grpcR []float64
	for i := 1; i <= o.runs; i++ {
		f, err := measureAB(ctx, o, sink, sinkAddr)
		if err != nil {
			return fmt.Errorf("A/B run %d: %w", i, err)
		}
		fmt.Printf("A/B run %d: JSON A %.1f µs, B %.1f µs CPU per request (B/A %.3f); gRPC A %.1f µs, B %.1f µs (B/A %.3f)\n",
			i, f.jsonA*1e6, f.jsonB*1e6, f.jsonB/f.jsonA, f.grpcA*1e6, f.grpcB*1e6, f.grpcB/f.grpcA)
		jsonR, grpcR = append(jsonR, f.jsonB/f.jsonA), append(grpcR, f.grpcB/f.grpcA)
	}
	what := "B (-bin) / A (-ab-bin): the change's cost with tracing off"
	if o.abTracing {
		what = "B (tracing on, every span exported) / A (tracing off)"
		if o.abBin != "" {
			what = "B (-bin) / A (-ab-bin), both exporting every span"
		}
	}
	if o.abLimits {
		what = "B (a client limit far above the load) / A (no limits)"
		if o.abRedis != "" {
			what = "B (a client limit far above the load, shared through Redis) / A (no limits)"
		}
	}
	if sink != nil {
		fmt.Printf("spans received: %d\n", sink.spans.Load())
	}
	missed := 0
	for _, r := range []struct {
		name string
		vs   []float64
	}{{"JSON CPU per request, " + what, jsonR}, {"gRPC CPU per request, " + what, grpcR}} {
		sort.Float64s(r.vs)
		m := r.vs[len(r.vs)/2]
		if o.abTracing || o.abRedis != "" {
			fmt.Printf("%-95s %6.3f\n", r.name, m)
			continue
		}
		verdict := "met"
		if m > abLimit {
			verdict, missed = "MISSED", missed+1
		}
		fmt.Printf("%-95s %6.3f ≤%g  %s\n", r.name, m, abLimit, verdict)
	}
	if missed > 0 {
		return fmt.Errorf("%d targets missed", missed)
	}
	return nil
}

// abLimit is issue 24's bound on what the instrumentation may cost with tracing off.
const abLimit = 1.03
