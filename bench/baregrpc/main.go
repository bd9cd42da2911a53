// Command baregrpc is make bench-e2e's second reference: the 40-item difficulties Bayes request
// served by a plain grpc-go server (protobuf-go's codec, no interceptor, auth, limits, logging or
// metrics) with the same pkg/measure calls as bench/bare. It shows what gRPC itself costs, so
// that what the gRPC door adds can be told apart from it.
package main

import (
	"context"
	"net"
	"os"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

type scoring struct {
	scoringv1.UnimplementedScoringServiceServer
	bundle *measure.Bundle
}

func (s scoring) ScoreDifficultiesBayes(_ context.Context, req *scoringv1.ScoreDifficultiesBayesRequest) (*scoringv1.Measure, error) {
	fw, _ := s.bundle.Framework(req.GetFramework())
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
	return &scoringv1.Measure{Ability: int32(measure.Round(est.Ability)), AbilityDisplay: fw.Display(est.Ability),
		Uncertainty: int32(measure.Round(est.Uncertainty)), Framework: fw.Name, ApiVersion: "dev"}, nil
}

func main() {
	lis, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	srv := grpc.NewServer()
	scoringv1.RegisterScoringServiceServer(srv, scoring{bundle: measure.Demo()})
	_ = srv.Serve(lis)
}
