package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// The group stream over gRPC (ForecastService.ForecastGroupStream): the same students as the
// NDJSON group stream's (the same generator, as messages), to a fresh forecast process; the first
// answers checked against the unary gRPC group of the same students (proto.Equal), and the
// group's aggregate against the one recomputed from the student answers.

// studentMessage is the next student of gen as a message.
func studentMessage(r *rand.Rand) *forecastv1.StudentData {
	// The same draws, in the same order, as students.next.
	a, u, d := float64(300+r.IntN(1000)), float64(30+r.IntN(60)), float64(r.IntN(400))
	return &forecastv1.StudentData{PriorAbility: &a, PriorUncertainty: &u, ElapsedDays: &d}
}

// groupStreamSettings are groupSettings as the stream's first message.
func groupStreamSettings() *forecastv1.ForecastGroupStreamRequest {
	return &forecastv1.ForecastGroupStreamRequest{Message: &forecastv1.ForecastGroupStreamRequest_Settings{Settings: &forecastv1.GroupStreamSettings{
		Subject: "reading", TestUncertainty: proto.Float64(32.5), CutLevels: []float64{500, 650, 800}}}}
}

// measureGRPCGroup streams o.students students over ForecastGroupStream to a fresh forecast
// process and checks the answers.
func measureGRPCGroup(ctx context.Context, o options, f *figures) error {
	forecast, err := startService(ctx, o.bin, "forecast")
	if err != nil {
		return err
	}
	defer forecast.Stop()
	conn, ctx, err := forecast.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := forecastv1.NewForecastServiceClient(conn)
	r := rand.New(rand.NewPCG(7, 11))
	req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(32.5), CutLevels: []float64{500, 650, 800}}
	for range sampled {
		req.StudentData = append(req.StudentData, studentMessage(r))
	}
	unary, err := client.ForecastReadingGroup(ctx, req)
	if err != nil {
		return err
	}
	if _, _, err := streamGRPCGroup(ctx, client, unary.GetForecasts().GetStudents(), min(sampled, o.students), nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	idle, err := forecast.Memory("VmHWM")
	if err != nil {
		return err
	}
	elapsed, d, err := streamGRPCGroup(ctx, client, unary.GetForecasts().GetStudents(), o.students, func() {
		if rss, err := forecast.Memory("VmRSS"); err == nil {
			f.grpcGroupTrail = append(f.grpcGroupTrail, (rss-idle)/mib)
		}
	})
	if err != nil {
		return err
	}
	peak, err := forecast.Memory("VmHWM")
	if err != nil {
		return err
	}
	f.grpcGroupSPS = float64(o.students) / elapsed
	f.grpcGroupRSS = peak - idle
	f.grpcGroupMaxRelDiff = d
	return nil
}

// streamGRPCGroup sends the settings and n students from one goroutine while this one reads the
// answers: the first ones against the unary group's entries, every one summed, the last the
// group's aggregate compared with the recomputed one. It returns the seconds from the call to the
// last answer and that comparison's max relative difference.
func streamGRPCGroup(ctx context.Context, client forecastv1.ForecastServiceClient, unary []*forecastv1.StudentForecast, n int, tenth func()) (float64, float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	st, err := client.ForecastGroupStream(ctx)
	if err != nil {
		return 0, 0, err
	}
	sendErr := make(chan error, 1)
	go func() {
		if err := st.Send(groupStreamSettings()); err != nil {
			sendErr <- err
			return
		}
		r := rand.New(rand.NewPCG(7, 11))
		msg := &forecastv1.ForecastGroupStreamRequest{}
		for range n {
			msg.Message = &forecastv1.ForecastGroupStreamRequest_Student{Student: studentMessage(r)}
			if err := st.Send(msg); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	var sums groupSums
	var a forecastv1.ForecastGroupStreamResponse
	for i := 0; i < n; i++ {
		a.Reset()
		if err := st.RecvMsg(&a); err != nil {
			return 0, 0, fmt.Errorf("answer %d: %w", i, err)
		}
		s := a.GetStudent()
		if s == nil || len(s.GetProbabilities()) != 4 || (i < len(unary) && !proto.Equal(s, unary[i])) {
			return 0, 0, fmt.Errorf("student %d answered %v, the unary group %v", i, &a, unary[min(i, len(unary)-1)])
		}
		sums.add(studentAnswer{Ability: s.GetAbility(), Uncertainty: s.GetUncertainty(), Probabilities: s.GetProbabilities()})
		if tenth != nil && (i+1)%max(1, n/10) == 0 {
			tenth()
		}
	}
	a.Reset()
	if err := st.RecvMsg(&a); err != nil {
		return 0, 0, fmt.Errorf("group answer: %w", err)
	}
	elapsed := time.Since(t0).Seconds()
	g := a.GetGroup()
	if g == nil || g.GetStudents() != int64(n) || g.GetAggregate() == nil {
		return 0, 0, fmt.Errorf("last answer %v: want the group of %d students", &a, n)
	}
	if err := st.RecvMsg(&a); !errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("after the group answer: %v, want the end of the stream", err)
	}
	if err := <-sendErr; err != nil {
		return 0, 0, err
	}
	agg := g.GetAggregate()
	d, err := maxRelDiff(groupAnswer{Ability: agg.GetGroupAbility(), Uncertainty: agg.GetGroupUncertainty(),
		Proportions: agg.GetGroupProportionPerLevel(), StdErrs: agg.GetGroupStderrPerLevel()}, sums.result())
	return elapsed, d, err
}
