package measure

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// updatePCMDifferential rewrites testdata/pcm_differential.txt from this build; it was written
// by the build before the partial credit sums were reshaped (see TestPCMDifferential).
var updatePCMDifferential = flag.Bool("update-pcm-differential", false, "rewrite testdata/pcm_differential.txt")

// TestPCMDifferential holds the partial credit answers to those of the build before the sums
// were reshaped for speed (commit e0584e1, running this same test with -update-pcm-differential):
// 1,200 seeded tests mixing 0/1 items with items of 2–6 categories (steps ordered or not, some 20
// and 150 logits apart, counts up to 3), each scored by Standard and by Bayes under a seeded prior,
// within 1e-12 logits of the ability and the uncertainty then (relative beyond 1 logit); and 300 seeded adaptive sessions
// on a bank of 1,000 partial credit items mixed with 0/1 ones, each item picked the same.
func TestPCMDifferential(t *testing.T) {
	t.Parallel()
	got := pcmDifferentialLines(t)
	want := goldenLines(t, "testdata/pcm_differential.txt", got, *updatePCMDifferential, 2700)
	if want == nil {
		return
	}
	bad, worst := 0, 0.0
	for i := range want {
		d, ok := pcmLineDiff(got[i], want[i])
		worst = math.Max(worst, d)
		if !ok {
			if bad++; bad <= 10 {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want[i])
			}
		}
	}
	t.Logf("largest difference %.3g logits", worst)
	if bad > 0 {
		t.Errorf("%d of %d answers differ from the build before", bad, len(want))
	}
}

// pcmLineDiff compares two lines: the words equal but for numbers (%.17g, logits), which may
// differ by 1e-12 (relative beyond 1 logit); it returns the largest difference of those and
// whether the lines agree.
func pcmLineDiff(got, want string) (float64, bool) {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return math.Inf(1), false
	}
	worst := 0.0
	for i := range w {
		if g[i] == w[i] {
			continue
		}
		a, errA := strconv.ParseFloat(g[i], 64)
		b, errB := strconv.ParseFloat(w[i], 64)
		if errA != nil || errB != nil {
			return math.Inf(1), false
		}
		worst = math.Max(worst, math.Abs(a-b)/math.Max(1, math.Abs(b)))
	}
	return worst, worst <= 1e-12
}

// pcmDifferentialSteps draws the steps of an item of m steps around loc (measure units).
func pcmDifferentialSteps(rng *rand.Rand, s, loc float64, m int) []float64 {
	spread := s * (0.2 + 1.5*rng.Float64())
	switch rng.IntN(20) {
	case 0:
		spread = 20 * s
	case 1:
		spread = 150 * s / float64(max(m-1, 1)) // the item's steps 150 logits apart, end to end
	}
	steps := make([]float64, m)
	for k := range steps {
		steps[k] = loc + spread*(float64(k)-float64(m-1)/2) + 0.3*s*rng.NormFloat64()
	}
	if rng.IntN(4) == 0 {
		rng.Shuffle(m, func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	}
	return steps
}

// pcmDifferentialLines computes the cases: the estimates in logits relative to each test's first
// item, so that 1e-12 is in logits.
func pcmDifferentialLines(t *testing.T) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 42))
	var lines []string
	for i := 0; i < 1200; i++ {
		f := testFramework(t, []string{"lexile", "quantile"}[i%2])
		s := f.UnitsPerLogit
		items := make([]Difficulty, 1+rng.IntN(60))
		for j := range items {
			loc := -400 + 2200*rng.Float64()
			items[j] = Difficulty{Measure: loc, Count: 1 + rng.IntN(3)/2}
			if j%4 != 3 {
				items[j].Steps = pcmDifferentialSteps(rng, s, loc, 1+rng.IntN(5))
			}
		}
		test := Test{Items: items}
		test.Correct = rng.IntN(test.MaxScore() + 1)
		std, errS := f.Standard(test)
		prior := Normal{Mean: -200 + 1600*rng.Float64(), SD: 20 + 400*rng.Float64()}
		bay, errB := f.Bayes(test, prior)
		if errS != nil || errB != nil {
			t.Fatalf("case %d: %v, %v", i, errS, errB)
		}
		lines = append(lines, fmt.Sprintf("standard %d %.17g %.17g", i, std.Ability/s, std.Uncertainty/s),
			fmt.Sprintf("bayes %d %.17g %.17g", i, bay.Ability/s, bay.Uncertainty/s))
	}
	bk, items := pcmDifferentialBank(t, rng)
	for i := 0; i < 300; i++ {
		req := AdaptiveRequest{Stop: StopRules{MaxItems: ptr(3 + rng.IntN(12))}}
		switch i % 4 {
		case 1:
			req.PriorAbility, req.PriorUncertainty = ptr(-200+1600*rng.Float64()), ptr(30+300*rng.Float64())
		case 2:
			req.TargetSuccess = ptr(0.2 + 0.6*rng.Float64())
		case 3:
			req.Randomesque, req.Seed = ptr(2+rng.IntN(5)), ptr(rng.Int64N(1<<31))
		}
		if i%3 == 0 {
			pool := make([]string, 50+rng.IntN(300))
			for j := range pool {
				pool[j] = items[rng.IntN(len(items))].ID
			}
			req.Pool = pool
		}
		lines = append(lines, walkSession(t, bk, &req, rng, fmt.Sprintf("adaptive %d", i)))
	}
	return lines
}

// pcmDifferentialBank is a lexile bank of 1,000 partial credit items of 2–4 categories and 300
// 0/1 items over −400 … 1800.
func pcmDifferentialBank(t *testing.T, rng *rand.Rand) (*Bank, []Item) {
	t.Helper()
	f := testFramework(t, "lexile")
	var items []Item
	for i := 0; i < 1300; i++ {
		loc := math.Round(-400 + 2200*rng.Float64())
		it := Item{ID: fmt.Sprintf("L%04d", i), Framework: "lexile", Difficulty: loc}
		if i%13 >= 3 {
			it.Steps = pcmDifferentialSteps(rng, f.UnitsPerLogit, loc, 2+rng.IntN(3))
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
