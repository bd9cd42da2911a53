package measure

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var updateAdaptiveDifferential = flag.Bool("update-adaptive-differential", false,
	"rewrite testdata/adaptive_differential.txt (only from a build whose picks are trusted)")

// TestAdaptiveDifferential: the picks of whole sessions on a bank built to stress the partial
// credit selection's bounds — items of 2 to 40 steps (past the estimators' multiplicative sums and
// past the envelope's grid), steps close, far apart and disordered, rating-scale items sharing
// their steps' pattern, 0/1 items among them — are the picks of the build before the information
// envelope, recorded in testdata/adaptive_differential.txt: maximum information and targets,
// priors across and beyond the scale, pools, exclusions, strands and randomesque choices.
func TestAdaptiveDifferential(t *testing.T) {
	t.Parallel()
	got := adaptiveDifferentialLines(t)
	want := goldenLines(t, "testdata/adaptive_differential.txt", got, *updateAdaptiveDifferential, 400)
	if want == nil {
		return
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("session %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d sessions differ from the build before", bad, len(want))
	}
}

// adaptiveDifferentialBank is a quantile bank of 700 items over −400 … 1600 in three strands.
func adaptiveDifferentialBank(t *testing.T, rng *rand.Rand) (*Bank, []Item) {
	t.Helper()
	f := testFramework(t, "quantile")
	f.StrandNames = []string{"A", "B", "C"}
	s := f.UnitsPerLogit
	rating := []float64{-1.2 * s, -0.3 * s, 0.4 * s, 1.1 * s} // one pattern of steps about the location
	var items []Item
	for i := 0; i < 700; i++ {
		loc := math.Round(-400 + 2000*rng.Float64())
		it := Item{ID: fmt.Sprintf("Q%04d", i), Framework: "quantile", Strand: f.StrandNames[i%3], Difficulty: loc}
		switch i % 10 {
		case 0, 1: // 0/1
		case 2, 3: // rating scale: the same steps about each location
			for _, r := range rating {
				it.Steps = append(it.Steps, loc+r)
			}
		case 4: // long: 16 to 40 steps
			it.Steps = pcmDifferentialSteps(rng, s, loc, 16+rng.IntN(25))
		default:
			it.Steps = pcmDifferentialSteps(rng, s, loc, 2+rng.IntN(5))
		}
		if it.Polytomous() {
			sum := 0.0
			for _, d := range it.Steps {
				sum += d
			}
			it.Difficulty = sum / float64(len(it.Steps))
		}
		items = append(items, it)
	}
	bk, err := NewBank(f, items)
	if err != nil {
		t.Fatal(err)
	}
	return bk, items
}

// adaptiveDifferentialLines runs the sessions: one line each, its picks in order and its stop.
func adaptiveDifferentialLines(t *testing.T) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 1206))
	bk, items := adaptiveDifferentialBank(t, rng)
	var lines []string
	for i := 0; i < 400; i++ {
		req := AdaptiveRequest{Stop: StopRules{MaxItems: ptr(2 + rng.IntN(14))}}
		switch i % 5 {
		case 1:
			req.PriorAbility, req.PriorUncertainty = ptr(-300+1800*rng.Float64()), ptr(20+300*rng.Float64())
		case 2:
			req.TargetSuccess = ptr(0.1 + 0.8*rng.Float64())
		case 3:
			req.Randomesque, req.Seed = ptr(2+rng.IntN(6)), ptr(rng.Int64N(1<<31))
		case 4: // far beyond the bank's items
			req.PriorAbility, req.PriorUncertainty = ptr([]float64{-3000, 4000}[rng.IntN(2)]), ptr(10.0)
		}
		switch i % 7 {
		case 0:
			req.Pool = make([]string, 20+rng.IntN(200))
			for j := range req.Pool {
				req.Pool[j] = items[rng.IntN(len(items))].ID
			}
		case 1:
			req.Exclude = make([]string, 50+rng.IntN(300))
			for j := range req.Exclude {
				req.Exclude[j] = items[rng.IntN(len(items))].ID
			}
		case 2:
			req.Strands = map[string]float64{"A": 1, "B": 2, "C": float64(1 + rng.IntN(3))}
		}
		lines = append(lines, walkSession(t, bk, &req, rng, fmt.Sprintf("session %d", i)))
	}
	return lines
}
