package measure

import (
	"context"
	"fmt"
)

// Strand is one skill area's result (§6).
type Strand struct {
	Name                 string
	Ability, Uncertainty float64 // posterior mean and SD, measure units
	Category             int     // 1 below the lower benchmark, 2 between, 3 at or above the upper
}

// Strands scores each strand present in answers, in order of first appearance (§6): the EAP over
// the strand's items with prior Normal(overall, StrandSpread²). The category compares the
// strand's ability rounded as it is shown (Round) with bench, so a strand shown as 300 is never
// "below 300". Should a strand not be scorable (it cannot happen with validated input), it takes
// the overall ability and the prior's spread.
func (f *Framework) Strands(answers []Answer, overall float64, bench Benchmark) []Strand {
	out, _ := f.StrandsContext(context.Background(), answers, overall, bench)
	return out
}

// StrandsContext is Strands that gives up with ctx's error once ctx is done (each strand's
// estimate is BayesContext's).
func (f *Framework) StrandsContext(ctx context.Context, answers []Answer, overall float64, bench Benchmark) ([]Strand, error) {
	var order []string
	groups := map[string][]Answer{}
	for _, a := range answers {
		name := a.Item.Strand
		if _, seen := groups[name]; !seen {
			order = append(order, name)
		}
		groups[name] = append(groups[name], a)
	}
	out := make([]Strand, 0, len(order))
	prior := Normal{Mean: overall, SD: f.StrandSpread}
	for _, name := range order {
		est, err := f.BayesContext(ctx, TestOf(groups[name]), prior)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("strand %q: %w", name, ctxErr)
		}
		if err != nil {
			est = Estimate{Ability: overall, Uncertainty: f.StrandSpread}
		}
		out = append(out, Strand{
			Name:        name,
			Ability:     est.Ability,
			Uncertainty: est.Uncertainty,
			Category:    bench.Category(est.Ability),
		})
	}
	return out, nil
}

// Category places an ability against the benchmark after rounding it as it is shown: 1 below
// Lower, 2 from Lower up to Upper, 3 at or above Upper.
func (b Benchmark) Category(ability float64) int {
	v := float64(Round(ability))
	switch {
	case v < b.Lower:
		return 1
	case v < b.Upper:
		return 2
	}
	return 3
}
