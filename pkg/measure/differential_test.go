package measure

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// updateDifferential rewrites testdata/differential.txt from this build. It was written by the
// build before partial credit (see TestDichotomousDifferential); rewriting it is only right when
// a dichotomous answer is meant to change.
var updateDifferential = flag.Bool("update-differential", false, "rewrite testdata/differential.txt")

// TestDichotomousDifferential holds every dichotomous answer of the library to the build before
// partial credit, bit for bit: 2,000 seeded cases of Standard, Bayes, PersonFit, Strands and
// Bank.Next (sessions on pools of the demo's dichotomous items, with and without a prior,
// targetSuccess, content balancing and seeded randomesque), each line the float64 bits of what
// the call answered. The file was written by that build (commit dc8bcb8) running this same test,
// which uses only the API both builds share:
//
//	git archive dc8bcb8 pkg/measure | tar -x -C /tmp/old
//	cp differential_test.go golden_lines_test.go /tmp/old/pkg/measure/
//	cd /tmp/old/pkg/measure && GOWORK=off go test -run TestDichotomousDifferential -update-differential .
//	cp testdata/differential.txt back here
func TestDichotomousDifferential(t *testing.T) {
	t.Parallel()
	got := differentialLines(t)
	want := goldenLines(t, "testdata/differential.txt", got, *updateDifferential, 2000)
	if want == nil {
		return
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d answers differ from the build before partial credit", bad, len(want))
	}
}

func bitsOf(vs ...float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%016x", math.Float64bits(v))
	}
	return strings.Join(parts, " ")
}

// differentialLines computes the cases, 400 of each kind.
func differentialLines(t *testing.T) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 28))
	b := Demo()
	frameworks := []string{"lexile", "quantile"}
	// The demo's dichotomous items of each framework in id order (the map's order is random); the
	// partial credit ones are LP… and QP… (told by id: the older build has no Steps to look at).
	bank := map[string][]Item{}
	for _, it := range b.items {
		if !strings.HasPrefix(it.ID, "LP") && !strings.HasPrefix(it.ID, "QP") {
			bank[it.Framework] = append(bank[it.Framework], it)
		}
	}
	for _, items := range bank {
		slices.SortFunc(items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
	}
	var lines []string
	add := func(kind string, i int, s string) { lines = append(lines, fmt.Sprintf("%s %d %s", kind, i, s)) }
	for i := 0; i < 400; i++ {
		f, _ := b.Framework(frameworks[i%2])
		n := 1 + rng.IntN(60)
		items := make([]Difficulty, n)
		total := 0
		for j := range items {
			items[j] = Difficulty{Measure: math.Round(-400 + 2200*rng.Float64()), Count: 1 + rng.IntN(3)/2}
			total += items[j].Count
		}
		test := Test{Items: items, Correct: rng.IntN(total + 1)}
		std, errS := f.Standard(test)
		prior := Normal{Mean: -200 + 1600*rng.Float64(), SD: 20 + 400*rng.Float64()}
		bay, errB := f.Bayes(test, prior)
		if errS != nil || errB != nil {
			t.Fatalf("case %d: %v, %v", i, errS, errB)
		}
		add("standard", i, bitsOf(std.Ability, std.Uncertainty))
		add("bayes", i, bitsOf(bay.Ability, bay.Uncertainty))
	}
	for i := 0; i < 400; i++ {
		fw := frameworks[i%2]
		f, _ := b.Framework(fw)
		answers := make([]Answer, 5+rng.IntN(40))
		for j := range answers {
			answers[j] = Answer{Item: bank[fw][rng.IntN(len(bank[fw]))], Correct: rng.IntN(3) > 0}
		}
		pf, err := f.PersonFit(-200+1600*rng.Float64(), answers)
		switch {
		case err == ErrExtremeScore:
			add("fit", i, "extreme")
		case err != nil:
			t.Fatalf("fit case %d: %v", i, err)
		default:
			add("fit", i, bitsOf(pf.Infit, pf.Outfit, pf.InfitZ, pf.OutfitZ)+" "+pf.Flag)
		}
		grade := rng.IntN(Grades)
		bm, _ := b.Benchmark(fw, grade, "MOY")
		var sb strings.Builder
		for _, st := range f.Strands(answers, -200+1600*rng.Float64(), bm) {
			fmt.Fprintf(&sb, "%s=%s/%d ", st.Name, bitsOf(st.Ability, st.Uncertainty), st.Category)
		}
		add("strands", i, sb.String())
	}
	for i := 0; i < 400; i++ {
		fw := frameworks[i%2]
		bk, _ := b.Bank(fw)
		f, _ := b.Framework(fw)
		pool := make([]string, 20+rng.IntN(200))
		for j := range pool {
			pool[j] = bank[fw][rng.IntN(len(bank[fw]))].ID
		}
		req := AdaptiveRequest{Pool: pool, Stop: StopRules{MaxItems: ptr(3 + rng.IntN(10))}}
		switch i % 5 {
		case 1:
			req.PriorAbility, req.PriorUncertainty = ptr(-200+1600*rng.Float64()), ptr(30+300*rng.Float64())
		case 2:
			req.TargetSuccess = ptr(0.2 + 0.6*rng.Float64())
		case 3:
			req.Strands = map[string]float64{f.StrandNames[0]: 1, f.StrandNames[2]: 2, f.StrandNames[4]: 1}
		case 4:
			req.Randomesque, req.Seed = ptr(2+rng.IntN(5)), ptr(rng.Int64N(1<<31))
		}
		theta := -200 + 1600*rng.Float64()
		var sb strings.Builder
		for {
			step, err := bk.Next(&req)
			if err != nil {
				t.Fatalf("adaptive case %d: %v", i, err)
			}
			next := ""
			if step.Next != nil {
				next = step.Next.ID
			}
			fmt.Fprintf(&sb, "%s:%s:%s ", next, step.StopReason, bitsOf(step.Estimate.Ability, step.Estimate.Uncertainty, step.Prior.Mean, step.Prior.SD))
			if step.Next == nil {
				break
			}
			req.Items = append(req.Items, Response{ID: next, Correct: rng.Float64() < f.Probability(theta, step.Next.Difficulty)})
		}
		add("adaptive", i, sb.String())
	}
	return lines
}
