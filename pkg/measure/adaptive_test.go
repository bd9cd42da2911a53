package measure

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// demoBank is the demo bundle's bank of a framework.
func demoBank(t testing.TB, framework string) *Bank {
	t.Helper()
	bk, ok := Demo().Bank(framework)
	if !ok {
		t.Fatalf("demo bundle has no %s bank", framework)
	}
	return bk
}

// demoAnswers is n answers to demo items of a framework (ids 1, 1+step, ...), right when i%3 != 0.
func demoAnswers(prefix string, n, step int) []Response {
	out := make([]Response, n)
	for i := range out {
		out[i] = Response{ID: fmt.Sprintf("%s%06d", prefix, 1+i*step), Correct: i%3 != 0}
	}
	return out
}

// mustNext is bk.Next that fails the test on an error.
func mustNext(t *testing.T, bk *Bank, req *AdaptiveRequest) Step {
	t.Helper()
	step, err := bk.Next(req)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return step
}

// scanBest is the independent check of the selection rule: it scans every item of the bundle,
// keeps the candidates (the framework's, not answered, not excluded, in the pool when given) and
// returns the one with the largest information P(1 − P)/s² at theta (V/s² for a polytomous item)
// — or, with a target, the one whose P (E/m) is nearest it — ties by the lower id. P is computed
// here from s and m, E and V by the test's own partial credit reference.
func scanBest(f *Framework, items []Item, theta float64, target float64, req *AdaptiveRequest) (Item, float64, bool) {
	lambda := math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch))
	s := f.UnitsPerLogit
	out := map[string]bool{}
	for _, r := range req.Items {
		out[r.ID] = true
	}
	for _, id := range req.Exclude {
		out[id] = true
	}
	in := map[string]bool{}
	for _, id := range req.Pool {
		in[id] = true
	}
	var best Item
	bestKey, found := 0.0, false
	for _, it := range items {
		if it.Framework != f.Name || out[it.ID] || (len(in) > 0 && !in[it.ID]) {
			continue
		}
		if len(req.Strands) > 0 {
			if _, named := req.Strands[it.Strand]; !named {
				continue
			}
		}
		p := 1 / (1 + math.Exp(-((theta-it.Difficulty)/s + lambda)))
		key := p * (1 - p) / (s * s)
		if it.Polytomous() { // METHOD §13: information V/s², success rate E/m
			var v float64
			p, v, _, _ = newPCMRef(f).moments(theta, it.Steps)
			p /= float64(len(it.Steps))
			key = v / (s * s)
		}
		better := func(a, b float64) bool { return a > b }
		if target > 0 {
			key = math.Abs(p - target)
			better = func(a, b float64) bool { return a < b }
		}
		if !found || better(key, bestKey) || (key == bestKey && it.ID < best.ID) {
			best, bestKey, found = it, key, true
		}
	}
	return best, bestKey, found
}

// allDemoItems lists every item of the demo bundle.
func allDemoItems(t testing.TB) []Item {
	t.Helper()
	var items []Item
	for _, it := range Demo().items {
		items = append(items, it)
	}
	if len(items) != 3540 {
		t.Fatalf("demo bundle: %d items; want 3540", len(items))
	}
	return items
}

// TestNextIsTheBestCandidate checks the index against a scan of the whole bank: at the ability
// Next returns, the item it names is the most informative candidate (or the nearest to the
// target success rate), ties by the lower id.
func TestNextIsTheBestCandidate(t *testing.T) {
	t.Parallel()
	all := allDemoItems(t)
	cases := []struct {
		name      string
		framework string
		req       AdaptiveRequest
	}{
		{"lexile, nothing answered", "lexile", AdaptiveRequest{}},
		{"lexile, 7 answered", "lexile", AdaptiveRequest{Items: demoAnswers("L", 7, 13)}},
		{"lexile, 20 answered, low prior", "lexile", AdaptiveRequest{Items: demoAnswers("L", 20, 31), PriorAbility: ptr(-300.0), PriorUncertainty: ptr(50.0)}},
		{"lexile, prior far above the bank", "lexile", AdaptiveRequest{PriorAbility: ptr(4000.0), PriorUncertainty: ptr(10.0)}},
		{"lexile, prior far below the bank", "lexile", AdaptiveRequest{PriorAbility: ptr(-4000.0), PriorUncertainty: ptr(10.0)}},
		{"lexile, target 0.75", "lexile", AdaptiveRequest{Items: demoAnswers("L", 5, 100), TargetSuccess: ptr(0.75)}},
		{"lexile, target 0.3", "lexile", AdaptiveRequest{Items: demoAnswers("L", 5, 100), TargetSuccess: ptr(0.3)}},
		{"lexile, target 0.99 beyond the bank", "lexile", AdaptiveRequest{PriorAbility: ptr(-2000.0), PriorUncertainty: ptr(5.0), TargetSuccess: ptr(0.99)}},
		{"lexile, grade 3 EOY", "lexile", AdaptiveRequest{Grade: ptr(3), TimeOfYear: ptr("EOY")}},
		{"lexile, exclude the best", "lexile", AdaptiveRequest{Exclude: []string{"L000200", "L000201", "L000202"}}},
		{"lexile, pool", "lexile", AdaptiveRequest{Pool: []string{"L000010", "L000020", "L000030", "L000040", "L000050", "L000010"}, Items: demoAnswers("L", 1, 1)}},
		{"lexile, pool with answered", "lexile", AdaptiveRequest{Pool: []string{"L000001", "L000002", "L000003"}, Items: []Response{{ID: "L000002", Correct: true}}}},
		{"lexile, one strand", "lexile", AdaptiveRequest{Strands: map[string]float64{"Vocabulary": 1}}},
		{"quantile, nothing answered", "quantile", AdaptiveRequest{}},
		{"quantile, 12 answered", "quantile", AdaptiveRequest{Items: demoAnswers("Q", 12, 17)}},
		{"quantile, target 0.75", "quantile", AdaptiveRequest{Items: demoAnswers("Q", 12, 17), TargetSuccess: ptr(0.75)}},
		{"quantile, pool and exclude, target 0.6", "quantile", AdaptiveRequest{Pool: []string{"Q000100", "Q000200", "Q000300", "Q000400"}, Exclude: []string{"Q000300"}, TargetSuccess: ptr(0.6)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bk := demoBank(t, c.framework)
			step := mustNext(t, bk, &c.req)
			if step.Next == nil {
				t.Fatalf("stopped (%q); want an item", step.StopReason)
			}
			target := 0.0
			if c.req.TargetSuccess != nil {
				target = *c.req.TargetSuccess
			}
			want, key, ok := scanBest(bk.Framework(), all, step.Estimate.Ability, target, &c.req)
			if !ok {
				t.Fatal("the scan found no candidate")
			}
			if step.Next.ID != want.ID {
				t.Errorf("next %s (difficulty %v); want %s (difficulty %v, key %v) at ability %v",
					step.Next.ID, step.Next.Difficulty, want.ID, want.Difficulty, key, step.Estimate.Ability)
			}
		})
	}
}

// tinyBank is a quantile bank (m = 0.5: information peaks at d = θ) of the given items.
func tinyBank(t testing.TB, items ...Item) *Bank {
	t.Helper()
	f := testFramework(t, "quantile")
	f.StrandNames = []string{"A", "B", "C"}
	for i := range items {
		items[i].Framework = "quantile"
		if items[i].Strand == "" {
			items[i].Strand = "A"
		}
	}
	bk, err := NewBank(f, items)
	if err != nil {
		t.Fatalf("NewBank: %v", err)
	}
	return bk
}

// TestNextTies pins the tie rule: equal information goes to the lower id in byte order.
func TestNextTies(t *testing.T) {
	t.Parallel()
	at := func(theta float64) AdaptiveRequest {
		return AdaptiveRequest{PriorAbility: ptr(theta), PriorUncertainty: ptr(100.0)}
	}
	cases := []struct {
		name  string
		items []Item
		req   AdaptiveRequest
		want  string
	}{
		{"same difficulty: L before S", []Item{{ID: "S000001", Difficulty: 500}, {ID: "L000844", Difficulty: 500}, {ID: "L000900", Difficulty: 500}}, at(500), "L000844"},
		{"same difficulty off the peak", []Item{{ID: "b", Difficulty: 600}, {ID: "a", Difficulty: 600}, {ID: "c", Difficulty: 300}}, at(500), "a"},
		{"nearer wins over the lower id", []Item{{ID: "a", Difficulty: 620}, {ID: "z", Difficulty: 590}}, at(500), "z"},
		{"below the peak", []Item{{ID: "a", Difficulty: 100}, {ID: "b", Difficulty: 420}, {ID: "c", Difficulty: 700}}, at(500), "b"},
		{"all above", []Item{{ID: "a", Difficulty: 900}, {ID: "b", Difficulty: 800}}, at(0), "b"},
		{"all below", []Item{{ID: "a", Difficulty: -900}, {ID: "b", Difficulty: -800}}, at(0), "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := mustNext(t, tinyBank(t, c.items...), &c.req)
			if step.Next == nil || step.Next.ID != c.want {
				t.Errorf("next %+v; want %s", step.Next, c.want)
			}
		})
	}
}

// TestNextRandomesque: the choice is one of the k best, the same for the same seed and request,
// and spread over the k best across seeds.
func TestNextRandomesque(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	base := AdaptiveRequest{Items: demoAnswers("L", 4, 50), Randomesque: ptr(5)}
	best := map[string]bool{}
	{
		req := base
		req.Randomesque = ptr(1)
		for range 5 {
			step := mustNext(t, bk, &req)
			best[step.Next.ID] = true
			req.Exclude = append(req.Exclude, step.Next.ID)
		}
	}
	seen := map[string]int{}
	for seed := range int64(200) {
		req := base
		req.Seed = ptr(seed)
		a, b := mustNext(t, bk, &req), mustNext(t, bk, &req)
		if a.Next.ID != b.Next.ID {
			t.Fatalf("seed %d: %s then %s for the same request; want the same item", seed, a.Next.ID, b.Next.ID)
		}
		if !best[a.Next.ID] {
			t.Fatalf("seed %d: %s is not one of the 5 best %v", seed, a.Next.ID, best)
		}
		seen[a.Next.ID]++
	}
	if len(seen) != 5 {
		t.Errorf("200 seeds chose %v; want each of the 5 best", seen)
	}
	for id, n := range seen {
		if n < 20 || n > 60 { // 40 expected; binomial SD 5.7
			t.Errorf("%s chosen %d times of 200; want about 40", id, n)
		}
	}
	// Without a seed the choice is still among the 5 best.
	for range 50 {
		req := base
		if step := mustNext(t, bk, &req); !best[step.Next.ID] {
			t.Fatalf("unseeded: %s is not one of the 5 best", step.Next.ID)
		}
	}
	// More than the candidates: all of them.
	tiny := tinyBank(t, Item{ID: "a", Difficulty: 0}, Item{ID: "b", Difficulty: 1000})
	got := map[string]bool{}
	for seed := range int64(40) {
		step := mustNext(t, tiny, &AdaptiveRequest{Randomesque: ptr(10), Seed: ptr(seed)})
		got[step.Next.ID] = true
	}
	if !got["a"] || !got["b"] {
		t.Errorf("randomesque 10 on a 2-item bank chose %v; want both", got)
	}
}

// TestNextSeedDependsOnTheRequest: the same seed gives different sessions different choices.
func TestNextSeedDependsOnTheRequest(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	seen := map[string]bool{}
	for i := range 60 {
		req := AdaptiveRequest{Items: []Response{{ID: fmt.Sprintf("L%06d", 1+i), Correct: true}}, Randomesque: ptr(3), Seed: ptr(int64(7)),
			PriorAbility: ptr(700.0), PriorUncertainty: ptr(300.0)}
		req.Exclude = []string{}
		step := mustNext(t, bk, &req)
		seen[step.Next.ID] = true
	}
	if len(seen) < 3 {
		t.Errorf("60 requests with seed 7 chose only %v", seen)
	}
}

// TestNextEstimateIsBayes: the ability and uncertainty are §3's EAP under the session prior,
// exactly what the Bayes item path computes for the same answers and prior.
func TestNextEstimateIsBayes(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	f := bk.Framework()
	answers := demoAnswers("L", 12, 23)
	for _, days := range []*float64{nil, ptr(0.0), ptr(200.0)} {
		req := AdaptiveRequest{Items: answers, PriorAbility: ptr(640.0), PriorUncertainty: ptr(120.0), ElapsedDays: days}
		step := mustNext(t, bk, &req)
		d := 0.0
		if days != nil {
			d = *days
		}
		prior := f.Grow(Normal{Mean: 640, SD: 120}, d)
		var resolved []Answer
		for _, r := range answers {
			it, _ := Demo().Item(r.ID)
			resolved = append(resolved, Answer{Item: it, Correct: r.Correct})
		}
		want, err := f.Bayes(TestOf(resolved), prior)
		if err != nil {
			t.Fatal(err)
		}
		if step.Estimate != want || step.Prior != prior {
			t.Errorf("days %v: estimate %+v, prior %+v; want %+v, %+v", d, step.Estimate, step.Prior, want, prior)
		}
		if step.Answered != 12 {
			t.Errorf("answered %d; want 12", step.Answered)
		}
	}
}

// TestNextPrior pins where the prior comes from when no ability is given, and that with nothing
// answered the estimate is the prior.
func TestNextPrior(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	f := bk.Framework()
	norm := func(tm float64) float64 { p, _ := f.prepared(); return p.curve.at(tm) }
	cases := []struct {
		name string
		req  AdaptiveRequest
		want Normal
	}{
		{"given prior wins over grade", AdaptiveRequest{PriorAbility: ptr(500.0), PriorUncertainty: ptr(80.0), Grade: ptr(9)}, Normal{500, 80}},
		{"given prior grown", AdaptiveRequest{PriorAbility: ptr(500.0), PriorUncertainty: ptr(80.0), ElapsedDays: ptr(365.25)}, f.Grow(Normal{500, 80}, 365.25)},
		{"grade, MOY by default", AdaptiveRequest{Grade: ptr(3)}, Normal{515, 300}},
		{"grade BOY", AdaptiveRequest{Grade: ptr(3), TimeOfYear: ptr("BOY")}, Normal{norm(3), 300}},
		{"grade EOY", AdaptiveRequest{Grade: ptr(12), TimeOfYear: ptr("EOY")}, Normal{norm(13), 300}},
		{"kindergarten MOY", AdaptiveRequest{Grade: ptr(0), TimeOfYear: ptr("MOY")}, Normal{-60, 300}},
		{"bank median (2,000 items: mean of the middle two)", AdaptiveRequest{}, Normal{689, 300}},
		{"pool median, odd", AdaptiveRequest{Pool: []string{"L000001", "L000002", "L000003"}}, Normal{-131, 300}},
		{"pool median, even, answered and excluded included", AdaptiveRequest{Pool: []string{"L000001", "L000002", "L000003", "L000004"},
			Exclude: []string{"L000002"}}, Normal{0, 300}},
	}
	// Difficulties of the pool: L000001 -131, L000002 616, L000003 -290; L000004's read here.
	l4, _ := Demo().Item("L000004")
	cases[len(cases)-1].want.Mean = median4(-131, 616, -290, l4.Difficulty)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := mustNext(t, bk, &c.req)
			if math.Abs(step.Prior.Mean-c.want.Mean) > 1e-9 || step.Prior.SD != c.want.SD {
				t.Errorf("prior %+v; want %+v", step.Prior, c.want)
			}
			if step.Estimate != (Estimate{step.Prior.Mean, step.Prior.SD}) {
				t.Errorf("estimate %+v with nothing answered; want the prior %+v", step.Estimate, step.Prior)
			}
		})
	}
}

func median4(a, b, c, d float64) float64 {
	v := []float64{a, b, c, d}
	for i := range v {
		for j := i + 1; j < len(v); j++ {
			if v[j] < v[i] {
				v[i], v[j] = v[j], v[i]
			}
		}
	}
	return (v[1] + v[2]) / 2
}

// TestNextStopRules: each rule on both sides of its boundary, in §11's order, with the defaults.
func TestNextStopRules(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	// The SD and ability after 6 answers, to put the boundaries exactly on them.
	six := demoAnswers("L", 6, 37)
	ref := mustNext(t, bk, &AdaptiveRequest{Items: six}).Estimate
	z95 := 1.959963984540054 // Φ⁻¹(0.975): the default confidence 0.95
	z80 := 1.2815515655446004
	cases := []struct {
		name string
		req  AdaptiveRequest
		want string
	}{
		{"29 answered: go on (default maxItems 30)", AdaptiveRequest{Items: demoAnswers("L", 29, 11)}, ""},
		{"30 answered: maxItems", AdaptiveRequest{Items: demoAnswers("L", 30, 11)}, StopMaxItems},
		{"maxItems 6 with 5", AdaptiveRequest{Items: demoAnswers("L", 5, 11), Stop: StopRules{MaxItems: ptr(6)}}, ""},
		{"maxItems 6 with 6", AdaptiveRequest{Items: six, Stop: StopRules{MaxItems: ptr(6)}}, StopMaxItems},
		{"maxItems before poolExhausted", AdaptiveRequest{Items: six, Pool: []string{six[0].ID}, Stop: StopRules{MaxItems: ptr(6)}}, StopMaxItems},
		{"pool exhausted", AdaptiveRequest{Items: six[:2], Pool: []string{six[0].ID, six[1].ID}}, StopPoolExhausted},
		{"pool exhausted by exclude", AdaptiveRequest{Pool: []string{six[0].ID}, Exclude: []string{six[0].ID}}, StopPoolExhausted},
		{"poolExhausted before targetUncertainty", AdaptiveRequest{Items: six, Pool: []string{six[0].ID}, Stop: StopRules{TargetUncertainty: ptr(1e4)}}, StopPoolExhausted},
		{"SD = target: stop", AdaptiveRequest{Items: six, Stop: StopRules{TargetUncertainty: ptr(ref.Uncertainty)}}, StopTargetUncertainty},
		{"SD just above target: go on", AdaptiveRequest{Items: six, Stop: StopRules{TargetUncertainty: ptr(math.Nextafter(ref.Uncertainty, 0))}}, ""},
		{"4 answered, default minItems 5: go on", AdaptiveRequest{Items: six[:4], Stop: StopRules{TargetUncertainty: ptr(1e4)}}, ""},
		{"5 answered, default minItems 5: stop", AdaptiveRequest{Items: six[:5], Stop: StopRules{TargetUncertainty: ptr(1e4)}}, StopTargetUncertainty},
		// minItems defaults to maxItems when that is below 5: maxItems 3 alone is valid, and
		// below it targetUncertainty waits.
		{"maxItems 3, 2 answered: default minItems 3 waits", AdaptiveRequest{Items: six[:2], Stop: StopRules{MaxItems: ptr(3), TargetUncertainty: ptr(1e4)}}, ""},
		{"maxItems 3, 3 answered: maxItems first", AdaptiveRequest{Items: six[:3], Stop: StopRules{MaxItems: ptr(3), TargetUncertainty: ptr(1e4)}}, StopMaxItems},
		{"minItems 0, nothing answered", AdaptiveRequest{Stop: StopRules{MinItems: ptr(0), TargetUncertainty: ptr(1e4)}}, StopTargetUncertainty},
		{"minItems 7 with 6", AdaptiveRequest{Items: six, Stop: StopRules{MinItems: ptr(7), TargetUncertainty: ptr(1e4)}}, ""},
		{"targetUncertainty before classified", AdaptiveRequest{Items: six, Stop: StopRules{TargetUncertainty: ptr(1e4), Cut: ptr(-5000.0)}}, StopTargetUncertainty},
		{"classified above the cut", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(ref.Ability - z95*ref.Uncertainty - 1e-6)}}, StopClassified},
		{"not classified at the edge", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(ref.Ability - z95*ref.Uncertainty + 1e-6)}}, ""},
		{"classified below the cut", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(ref.Ability + z95*ref.Uncertainty + 1e-6)}}, StopClassified},
		{"confidence 0.8: classified", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(ref.Ability + z80*ref.Uncertainty + 1e-6), Confidence: ptr(0.8)}}, StopClassified},
		{"confidence 0.8: not yet", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(ref.Ability + z80*ref.Uncertainty - 1e-6), Confidence: ptr(0.8)}}, ""},
		{"classified needs minItems", AdaptiveRequest{Items: six, Stop: StopRules{Cut: ptr(-5000.0), MinItems: ptr(7)}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := mustNext(t, bk, &c.req)
			if step.StopReason != c.want {
				t.Errorf("stop %q (ability %v, SD %v); want %q", step.StopReason, step.Estimate.Ability, step.Estimate.Uncertainty, c.want)
			}
			if (step.StopReason == "") != (step.Next != nil) {
				t.Errorf("stop %q with next %+v; want an item exactly when not stopping", step.StopReason, step.Next)
			}
		})
	}
}

// TestNextContentBalancing: the next item comes from the named strand furthest below its target
// share, ties by the larger target and then the name; a strand with nothing left gives way.
func TestNextContentBalancing(t *testing.T) {
	t.Parallel()
	items := []Item{
		{ID: "a1", Strand: "A", Difficulty: 0}, {ID: "a2", Strand: "A", Difficulty: 10}, {ID: "a3", Strand: "A", Difficulty: 20},
		{ID: "b1", Strand: "B", Difficulty: 300}, {ID: "b2", Strand: "B", Difficulty: 310},
		{ID: "c1", Strand: "C", Difficulty: 5},
	}
	bk := tinyBank(t, items...)
	at0 := func(req AdaptiveRequest) AdaptiveRequest {
		req.PriorAbility, req.PriorUncertainty = ptr(0.0), ptr(1e-3) // a certain prior: θ stays 0
		return req
	}
	cases := []struct {
		name string
		req  AdaptiveRequest
		want string
	}{
		{"no balancing: the best overall", at0(AdaptiveRequest{}), "a1"},
		{"only B named", at0(AdaptiveRequest{Strands: map[string]float64{"B": 1}}), "b1"},
		{"nothing answered: larger target first", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1, "B": 3}}), "b1"},
		{"nothing answered, equal targets: name order", at0(AdaptiveRequest{Strands: map[string]float64{"B": 2, "C": 2}}), "b1"},
		{"B answered: A is short", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1, "B": 3}, Items: []Response{{ID: "b1"}}}), "a1"},
		{"shares: A 1/2 of 2 vs target 1/4: B", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1, "B": 3}, Items: []Response{{ID: "b1"}, {ID: "a1"}}}), "b2"},
		{"unnamed strands do not count", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1, "B": 1}, Items: []Response{{ID: "c1"}, {ID: "a1"}}}), "b1"},
		{"a strand with nothing left gives way", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1, "B": 9}, Items: []Response{{ID: "b1"}}, Exclude: []string{"b2"}}), "a1"},
		{"pool within a strand", at0(AdaptiveRequest{Strands: map[string]float64{"A": 1}, Pool: []string{"a3", "b1", "c1"}}), "a3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := mustNext(t, bk, &c.req)
			if step.Next == nil || step.Next.ID != c.want {
				t.Errorf("next %+v (stop %q); want %s", step.Next, step.StopReason, c.want)
			}
		})
	}
	step := mustNext(t, bk, ptr(at0(AdaptiveRequest{Strands: map[string]float64{"B": 1}, Items: []Response{{ID: "b1"}, {ID: "b2"}}})))
	if step.StopReason != StopPoolExhausted {
		t.Errorf("named strands used up: stop %q; want %q", step.StopReason, StopPoolExhausted)
	}
}

// TestNextInvalid: every problem at once, each under its field's wire path, naming the id,
// strand or value; both sides of each boundary.
func TestNextInvalid(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	cases := []struct {
		name string
		req  AdaptiveRequest
		want []string // "field: message fragment"
	}{
		{"unknown, other framework, repeated, empty ids", AdaptiveRequest{Items: []Response{{ID: "L000001"}, {ID: "X1"}, {ID: "Q000001"}, {ID: "L000001"}, {}}}, []string{
			`items[1].id: unknown item id "X1"`,
			`items[2].id: "Q000001" is a quantile item; the request's framework is lexile`,
			`items[3].id: "L000001" repeats items[0].id`,
			`items[4].id: is required`,
		}},
		{"pool and exclude", AdaptiveRequest{Pool: []string{"L000001", "Q000002", "nope"}, Exclude: []string{"Q000003", ""}}, []string{
			`pool[1]: "Q000002" is a quantile item; the request's framework is lexile`,
			`pool[2]: unknown item id "nope"`,
			`exclude[0]: "Q000003" is a quantile item`,
			`exclude[1]: is required`,
		}},
		{"strands", AdaptiveRequest{Strands: map[string]float64{"Poetry": 1, "Vocabulary": 0, "Key Ideas": -1, "Craft and Structure": math.NaN()}}, []string{
			`strands["Poetry"]: unknown lexile strand "Poetry" (known: Vocabulary, Key Ideas`,
			`strands["Vocabulary"]: the share of strand "Vocabulary" must be a number greater than 0, got 0`,
			`strands["Key Ideas"]: the share of strand "Key Ideas" must be a number greater than 0, got -1`,
			`strands["Craft and Structure"]: the share of strand "Craft and Structure" must be a number greater than 0, got NaN`,
		}},
		{"selection", AdaptiveRequest{Randomesque: ptr(0), TargetSuccess: ptr(1.0)}, []string{
			`randomesque: must be 1 or more, got 0`,
			`targetSuccess: must be between 0 and 1 (both excluded), got 1`,
		}},
		{"targetSuccess 0", AdaptiveRequest{TargetSuccess: ptr(0.0)}, []string{`targetSuccess: must be between 0 and 1 (both excluded), got 0`}},
		{"stop", AdaptiveRequest{Stop: StopRules{MaxItems: ptr(0), MinItems: ptr(-1), TargetUncertainty: ptr(0.0), Cut: ptr(math.Inf(1)), Confidence: ptr(1.0)}}, []string{
			`stop.maxItems: must be 1 or more, got 0`,
			`stop.minItems: must be 0 or more, got -1`,
			`stop.targetUncertainty: must be greater than 0`,
			`stop.cut: must be a number between -10000 and 10000, got +Inf`,
			`stop.confidence: must be between 0 and 1 (both excluded), got 1`,
		}},
		{"minItems above maxItems", AdaptiveRequest{Stop: StopRules{MaxItems: ptr(4), MinItems: ptr(5)}}, []string{`stop.minItems: 5 is more than stop.maxItems (4)`}},
		{"minItems above the default maxItems", AdaptiveRequest{Stop: StopRules{MinItems: ptr(31)}}, []string{`stop.minItems: 31 is more than stop.maxItems (30, the default)`}},
		{"confidence 0", AdaptiveRequest{Stop: StopRules{Confidence: ptr(0.0)}}, []string{`stop.confidence: must be between 0 and 1 (both excluded), got 0`}},
		{"prior ability alone", AdaptiveRequest{PriorAbility: ptr(500.0)}, []string{`priorUncertainty: is required with priorAbility`}},
		{"prior uncertainty alone", AdaptiveRequest{PriorUncertainty: ptr(50.0), ElapsedDays: ptr(3.0)}, []string{`priorAbility: is required with priorUncertainty`}},
		{"elapsed days alone", AdaptiveRequest{ElapsedDays: ptr(3.0)}, []string{`elapsedDays: needs priorAbility and priorUncertainty`}},
		{"prior values", AdaptiveRequest{PriorAbility: ptr(1e5), PriorUncertainty: ptr(0.0), ElapsedDays: ptr(-1.0)}, []string{
			`priorAbility: must be a number between -10000 and 10000`,
			`priorUncertainty: must be greater than 0`,
			`elapsedDays: must be between 0 and 3653`,
		}},
		{"grade and time of year", AdaptiveRequest{Grade: ptr(13), TimeOfYear: ptr("Fall")}, []string{
			`grade: must be between 0 (Kindergarten) and 12, got 13`,
			`timeOfYear: must be BOY, MOY or EOY, got "Fall"`,
		}},
		{"grade -1", AdaptiveRequest{Grade: ptr(-1)}, []string{`grade: must be between 0 (Kindergarten) and 12, got -1`}},
		{"long ids and names are quoted by their start", AdaptiveRequest{Items: []Response{{ID: strings.Repeat("x", 100)}},
			Strands: map[string]float64{strings.Repeat("é", 40): 1}, TimeOfYear: ptr(strings.Repeat("y", 65)), Grade: ptr(1)}, []string{
			`items[0].id: unknown item id "` + strings.Repeat("x", 64) + `…"`,
			`strands["` + strings.Repeat("é", 32) + `…"]: unknown lexile strand "` + strings.Repeat("é", 32) + `…"`,
			`timeOfYear: must be BOY, MOY or EOY, got "` + strings.Repeat("y", 64) + `…"`,
		}},
		{"64 bytes are quoted whole", AdaptiveRequest{Pool: []string{strings.Repeat("z", 64)}}, []string{
			`pool[0]: unknown item id "` + strings.Repeat("z", 64) + `"`,
		}},
		{"time of year without grade", AdaptiveRequest{TimeOfYear: ptr("BOY")}, []string{`timeOfYear: needs grade`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := bk.Next(&c.req)
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %v; want a *RequestError", err)
			}
			var got []string
			for _, p := range re.Problems {
				got = append(got, p.Field+": "+p.Message)
			}
			if len(got) != len(c.want) {
				t.Errorf("problems %q; want %d like %q", got, len(c.want), c.want)
			}
			for _, w := range c.want {
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, w)
				}
				if !found {
					t.Errorf("problems %q; want one starting %q", got, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "adaptive request: ") {
				t.Errorf("error text %q", err)
			}
			var count int
			if ok := bk.Check(&c.req, func(string, string, ...any) { count++ }); ok || count != len(re.Problems) {
				t.Errorf("Check: ok %v with %d problems; want false with %d", ok, count, len(re.Problems))
			}
		})
	}
	// The last accepted values of each boundary above.
	good := AdaptiveRequest{Randomesque: ptr(1), TargetSuccess: ptr(math.Nextafter(1, 0)), Grade: ptr(12), TimeOfYear: ptr("MOY"),
		Stop: StopRules{MaxItems: ptr(1), MinItems: ptr(1), TargetUncertainty: ptr(1e-9), Cut: ptr(1e4), Confidence: ptr(math.Nextafter(1, 0))}}
	if _, err := bk.Next(&good); err != nil {
		t.Errorf("boundary values: %v; want no error", err)
	}
	good2 := AdaptiveRequest{TargetSuccess: ptr(1e-300), Grade: ptr(0), Stop: StopRules{MinItems: ptr(0), Confidence: ptr(1e-9), Cut: ptr(-1e4)}}
	if _, err := bk.Next(&good2); err != nil {
		t.Errorf("lower boundary values: %v; want no error", err)
	}
	if !bk.Check(&good, func(f, m string, a ...any) { t.Errorf("Check: %s: %s", f, fmt.Sprintf(m, a...)) }) {
		t.Error("Check of a good request: false")
	}
}

// TestNewBank: the constructor refuses what would make the index wrong.
func TestNewBank(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	cases := []struct {
		name  string
		fw    *Framework
		items []Item
		want  string
	}{
		{"no items", f, nil, "no items"},
		{"other framework", f, []Item{{ID: "Q1", Framework: "quantile"}}, `"Q1" is a quantile item, not lexile`},
		{"no id", f, []Item{{Framework: "lexile"}}, "no id"},
		{"not finite", f, []Item{{ID: "L1", Framework: "lexile", Difficulty: math.Inf(1)}}, "not finite"},
		{"duplicate", f, []Item{{ID: "L1", Framework: "lexile"}, {ID: "L1", Framework: "lexile"}}, "twice"},
		{"bad framework", &Framework{Name: "x"}, []Item{{ID: "L1", Framework: "x"}}, "bank: framework"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewBank(c.fw, c.items); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want one containing %q", err, c.want)
			}
		})
	}
	bk, err := NewBank(f, []Item{{ID: "L2", Framework: "lexile", Difficulty: 7}, {ID: "L1", Framework: "lexile", Difficulty: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if bk.Len() != 2 || bk.Median() != 5 || bk.Framework() != f {
		t.Errorf("bank of 2: len %d, median %v; want 2, 5", bk.Len(), bk.Median())
	}
	if it, ok := bk.Item("L2"); !ok || it.Difficulty != 7 {
		t.Errorf("Item(L2) = %+v, %v; want difficulty 7", it, ok)
	}
	if _, ok := bk.Item("L3"); ok {
		t.Error("Item(L3): found")
	}
	if _, ok := Demo().Bank("nope"); ok {
		t.Error("Bank(nope): found")
	}
	if l := demoBank(t, "lexile").Len(); l != 2020 {
		t.Errorf("demo lexile bank: %d items; want 2020", l)
	}
}
