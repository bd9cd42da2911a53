package scoring

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// sendable reports what stops an answer's ability and uncertainty from being sent back as a
// prior (CheckPrior, as every Bayes path checks it), or "" when nothing does.
func sendable(ability, uncertainty int32) string {
	a, u, days := float64(ability), float64(uncertainty), 0.0
	var problems string
	measure.CheckPrior(func(field, format string, args ...any) {
		problems += field + " " + fmt.Sprintf(format, args...) + "; "
	}, "", &a, &u, &days)
	return problems
}

// extremePriors are priors at and next to the edges of what a request accepts.
var extremePriors = []struct{ mean, sd, days float64 }{
	{-10000, 10000, 0}, {10000, 10000, 3653}, {-10000, 1e-3, 0}, {10000, 0.4, 0}, {0, 1e-9, 0},
	{-10000, 0.49, 3653}, {9999.6, 10000, 0}, {-3000, 300, 365},
}

// TestAnswersAreSendableAsPriors: over extreme items, scores and priors, every path that answers
// an ability answers one a request takes back as its prior (before, an uncertainty of 0 and
// abilities such as -13513 came back).
func TestAnswersAreSendableAsPriors(t *testing.T) {
	t.Parallel()
	s := direct(t)
	ctx := context.Background()
	edges := []float64{-10000, 10000, -9999.5, 0}
	t.Run("difficulties bayes", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(38, 1))
		for trial := range 300 {
			n := 1 + rng.IntN(40)
			req := &scoringv1.ScoreDifficultiesBayesRequest{Framework: proto.String([]string{"lexile", "quantile"}[trial%2])}
			for range n {
				d := edges[rng.IntN(len(edges))]
				if rng.IntN(3) == 0 {
					d = rng.Float64()*20000 - 10000
				}
				req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: proto.Float64(d)})
			}
			pr := extremePriors[rng.IntN(len(extremePriors))]
			req.NumberCorrect = proto.Int32([]int32{0, int32(n), int32(rng.IntN(n + 1))}[rng.IntN(3)])
			req.PriorAbility, req.PriorUncertainty, req.ElapsedDays = proto.Float64(pr.mean), proto.Float64(pr.sd), proto.Float64(pr.days)
			got, err := s.ScoreDifficultiesBayes(ctx, req)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if why := sendable(got.GetAbility(), got.GetUncertainty()); why != "" {
				t.Fatalf("trial %d (%d items, %d right, prior %v): answer %d ± %d is refused as a prior: %s",
					trial, n, req.GetNumberCorrect(), pr, got.GetAbility(), got.GetUncertainty(), why)
			}
		}
	})
	t.Run("bundle items, standard, bayes and strands", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(38, 2))
		for trial := range 60 {
			n := 1 + rng.IntN(30)
			var res []*scoringv1.ItemResult
			right := []int{0, n, rng.IntN(n + 1)}[trial%3]
			for i := range n {
				r := int32(0)
				if i < right {
					r = 1
				}
				res = append(res, &scoringv1.ItemResult{Id: proto.String(measureID("L", 1+i)), Result: proto.Int32(r)})
			}
			pr := extremePriors[trial%len(extremePriors)]
			std, err := s.ScoreItemResults(ctx, &scoringv1.ScoreItemResultsRequest{Items: res, Framework: proto.String("lexile")})
			if err != nil {
				t.Fatal(err)
			}
			bayes, err := s.ScoreItemResultsBayesStrands(ctx, &scoringv1.ScoreItemResultsBayesStrandsRequest{
				Items: res, Framework: proto.String("lexile"), Grade: proto.Int32(5), TimeOfYear: proto.String("BOY"),
				PriorAbility: proto.Float64(pr.mean), PriorUncertainty: proto.Float64(pr.sd), ElapsedDays: proto.Float64(pr.days),
			})
			if err != nil {
				t.Fatal(err)
			}
			answers := map[string][2]int32{"standard": {std.GetAbility(), std.GetUncertainty()}, "bayes": {bayes.GetAbility(), bayes.GetUncertainty()}}
			for _, st := range bayes.GetStrands() {
				answers["strand "+st.GetName()] = [2]int32{st.GetAbility(), st.GetUncertainty()}
			}
			for path, a := range answers {
				if why := sendable(a[0], a[1]); why != "" {
					t.Fatalf("trial %d (%d of %d right, prior %v): %s answer %d ± %d is refused as a prior: %s", trial, right, n, pr, path, a[0], a[1], why)
				}
			}
		}
	})
	t.Run("scale bayes", func(t *testing.T) {
		t.Parallel()
		for _, pr := range extremePriors {
			for _, sem := range []float64{1e-6, 0.3, 1000} {
				got, err := s.ScoreScaleBayes(ctx, &scoringv1.ScoreScaleBayesRequest{
					LinkId: proto.String("STATE-READ-2026"), ScaleScore: proto.String("800"), ScaleSem: proto.Float64(sem),
					PriorAbility: proto.Float64(pr.mean), PriorUncertainty: proto.Float64(pr.sd), ElapsedDays: proto.Float64(pr.days),
				})
				if err != nil {
					t.Fatalf("prior %v, SEM %v: %v", pr, sem, err)
				}
				if why := sendable(got.GetAbility(), got.GetUncertainty()); why != "" {
					t.Errorf("prior %v, SEM %v: answer %d ± %d is refused as a prior: %s", pr, sem, got.GetAbility(), got.GetUncertainty(), why)
				}
			}
		}
	})
}

// TestWireEstimate pins the edges of the reported estimate on the scoring wire.
func TestWireEstimate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   measure.Estimate
		a, u int32
	}{
		{measure.Estimate{Ability: -13513, Uncertainty: 0.2}, -10000, 1},
		{measure.Estimate{Ability: 10000.4, Uncertainty: 10000.4}, 10000, 10000},
		{measure.Estimate{Ability: 10000.6, Uncertainty: 12000}, 10000, 10000},
		{measure.Estimate{Ability: -9999.6, Uncertainty: 0.5}, -10000, 1},
		{measure.Estimate{Ability: 640.5, Uncertainty: 1.5}, 641, 2},
		{measure.Estimate{Ability: 0, Uncertainty: 0}, 0, 1},
	} {
		t.Run(fmt.Sprint(c.in), func(t *testing.T) {
			t.Parallel()
			rep := measure.Reported(c.in)
			if a, u := wireAbility(rep), wireUncertainty(rep); a != c.a || u != c.u {
				t.Errorf("got %d ± %d; want %d ± %d", a, u, c.a, c.u)
			}
		})
	}
}
