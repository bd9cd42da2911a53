package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// The same batch over gRPC (ScoringService.ScoreBatch): the records are the JSON batch's bodies
// as ScoreDifficultiesBayesRequest messages, each answer checked against the unary gRPC answer
// for its body. The reference is the same loop as the JSON batch's, with protobuf in place of
// JSON: proto.Unmarshal of the request, the same pkg/measure calls, proto.Marshal of the Measure.

// protoBodies are scoreBodies as protobuf requests, and their encodings for the reference loop.
func protoBodies() ([]*scoringv1.ScoreDifficultiesBayesRequest, [][]byte, error) {
	reqs := make([]*scoringv1.ScoreDifficultiesBayesRequest, variants)
	wire := make([][]byte, variants)
	for k, body := range scoreBodies() {
		reqs[k] = &scoringv1.ScoreDifficultiesBayesRequest{}
		if err := protojson.Unmarshal(body, reqs[k]); err != nil {
			return nil, nil, err
		}
		b, err := proto.Marshal(reqs[k])
		if err != nil {
			return nil, nil, err
		}
		wire[k] = b
	}
	return reqs, wire, nil
}

// protoScore is one record's work in the protobuf reference loop.
func protoScore(bundle *measure.Bundle, body []byte, out []byte) ([]byte, error) {
	var req scoringv1.ScoreDifficultiesBayesRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	fw, _ := bundle.Framework(req.GetFramework())
	test := measure.Test{Correct: int(req.GetNumberCorrect())}
	for _, it := range req.GetItems() {
		n := 1
		if it.Count != nil {
			n = int(it.GetCount())
		}
		test.Items = append(test.Items, measure.Difficulty{Measure: it.GetDifficulty(), Count: n})
	}
	prior := fw.Grow(measure.Normal{Mean: req.GetPriorAbility(), SD: req.GetPriorUncertainty()}, req.GetElapsedDays())
	est, _ := fw.Bayes(test, prior)
	m := &scoringv1.Measure{Ability: int32(measure.Round(est.Ability)), AbilityDisplay: fw.Display(est.Ability), Uncertainty: int32(measure.Round(est.Uncertainty)), Framework: fw.Name, ApiVersion: "dev"}
	return proto.MarshalOptions{}.MarshalAppend(out[:0], m)
}

// protoLoop runs the protobuf reference over records n0..n1-1: seconds and CPU seconds.
func protoLoop(ctx context.Context, bundle *measure.Bundle, wire [][]byte, n0, n1 int) (wall, cpu float64, err error) {
	var out []byte
	c0 := selfCPU()
	t0 := time.Now()
	for i := n0; i < n1; i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		if out, err = protoScore(bundle, wire[i%variants], out); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(t0).Seconds(), selfCPU() - c0, nil
}

// measureGRPCBatch streams o.records records over ScoreBatch to a fresh scoring process,
// checking every answer.
func measureGRPCBatch(ctx context.Context, o options, f *figures) error {
	reqs, wire, err := protoBodies()
	if err != nil {
		return err
	}
	bundle := measure.Demo()
	scoring, err := startService(ctx, o.bin, "scoring")
	if err != nil {
		return err
	}
	defer scoring.Stop()
	conn, ctx, err := scoring.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := scoringv1.NewScoringServiceClient(conn)
	unary := make([]*scoringv1.Measure, variants)
	for k, r := range reqs {
		if unary[k], err = client.ScoreDifficultiesBayes(ctx, r); err != nil {
			return err
		}
		ref, err := protoScore(bundle, wire[k], nil)
		if err != nil {
			return err
		}
		var m scoringv1.Measure
		if err := proto.Unmarshal(ref, &m); err != nil {
			return err
		}
		m.ApiVersion = unary[k].GetApiVersion()
		if !proto.Equal(&m, unary[k]) {
			return fmt.Errorf("the protobuf reference answered %v, the service %v: not the same work", &m, unary[k])
		}
	}
	if _, err := streamGRPCBatch(ctx, client, reqs, unary, 1000, nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	idle, err := scoring.Memory("VmHWM")
	if err != nil {
		return err
	}
	half := o.records / 2
	ref1, cpu1, err := protoLoop(ctx, bundle, wire, 0, half)
	if err != nil {
		return err
	}
	c0, err := scoring.CPUSeconds()
	if err != nil {
		return err
	}
	elapsed, err := streamGRPCBatch(ctx, client, reqs, unary, o.records, func() {
		if rss, err := scoring.Memory("VmRSS"); err == nil {
			f.grpcTrail = append(f.grpcTrail, (rss-idle)/mib)
		}
	})
	if err != nil {
		return err
	}
	c1, err := scoring.CPUSeconds()
	if err != nil {
		return err
	}
	peak, err := scoring.Memory("VmHWM")
	if err != nil {
		return err
	}
	ref2, cpu2, err := protoLoop(ctx, bundle, wire, half, o.records)
	if err != nil {
		return err
	}
	f.grpcRPS = float64(o.records) / elapsed
	f.grpcCPU = (c1 - c0) / float64(o.records)
	f.protoRefRPS = float64(o.records) / (ref1 + ref2)
	f.protoRefCPU = (cpu1 + cpu2) / float64(o.records)
	f.grpcRSS = peak - idle
	return nil
}

// streamGRPCBatch sends n records on one ScoreBatch stream from one goroutine while this one
// reads the answers, checking each (record i is body i%variants, answered as the unary call of
// it) and the trailer's counts. It returns the seconds from the call to its status.
func streamGRPCBatch(ctx context.Context, client scoringv1.ScoringServiceClient, reqs []*scoringv1.ScoreDifficultiesBayesRequest, unary []*scoringv1.Measure, n int, tenth func()) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	st, err := client.ScoreBatch(ctx)
	if err != nil {
		return 0, err
	}
	sendErr := make(chan error, 1)
	go func() {
		rec := &scoringv1.ScoreBatchRecord{}
		body := &scoringv1.ScoreBatchRecord_ScoreDifficultiesBayes{}
		rec.Request = body
		for i := 0; i < n; i++ {
			rec.Id = "r" + strconv.Itoa(i)
			body.ScoreDifficultiesBayes = reqs[i%variants]
			if err := st.Send(rec); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	var a scoringv1.ScoreBatchAnswer
	for i := 0; ; i++ {
		a.Reset()
		err := st.RecvMsg(&a)
		if errors.Is(err, io.EOF) {
			if i != n {
				return 0, fmt.Errorf("%d answers for %d records", i, n)
			}
			break
		}
		if err != nil {
			return 0, fmt.Errorf("answer %d: %w", i, err)
		}
		m, want := a.GetMeasure(), unary[i%variants]
		if a.GetId() != "r"+strconv.Itoa(i) || m == nil || m.Ability != want.Ability || m.Uncertainty != want.Uncertainty ||
			m.AbilityDisplay != want.AbilityDisplay || m.Framework != want.Framework || m.ApiVersion != want.ApiVersion {
			return 0, fmt.Errorf("answer %d is %v, want id r%d and %v (the unary answer)", i, &a, i, want)
		}
		if tenth != nil && (i+1)%max(1, n/10) == 0 {
			tenth()
		}
	}
	elapsed := time.Since(t0).Seconds()
	if err := <-sendErr; err != nil {
		return 0, err
	}
	tr := st.Trailer()
	if got := tr.Get("yardstick-records"); len(got) != 1 || got[0] != strconv.Itoa(n) || tr.Get("yardstick-failed")[0] != "0" {
		return 0, fmt.Errorf("trailer %v, want %d records, none failed", tr, n)
	}
	return elapsed, nil
}
