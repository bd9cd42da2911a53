package measure

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// pcmBank is a seeded quantile bank of 300 dichotomous items and 80 polytomous ones (0–2 and
// 0–3, steps ordered or not) over −400 … 1600, in three strands; with dichotomized, each
// polytomous item is replaced by a dichotomous item of the same id at its location.
func pcmBank(t testing.TB, dichotomized bool) (*Bank, []Item) {
	t.Helper()
	rng := rand.New(rand.NewPCG(28, 11))
	var items []Item
	strands := []string{"A", "B", "C"}
	for i := 0; i < 380; i++ {
		loc := math.Round(-400 + 2000*rng.Float64())
		it := Item{ID: fmt.Sprintf("I%04d", i), Framework: "quantile", Strand: strands[i%3], Difficulty: loc}
		if i%19 < 4 && !dichotomized {
			m := 2 + i%2
			spread := 60 + 200*rng.Float64()
			sum := 0.0
			for k := 0; k < m; k++ {
				d := math.Round(loc + spread*(float64(k)-float64(m-1)/2) + 80*rng.NormFloat64())
				it.Steps = append(it.Steps, d)
				sum += d
			}
			it.Difficulty = sum / float64(m)
		}
		items = append(items, it)
	}
	f := testFramework(t, "quantile")
	f.StrandNames = strands
	bk, err := NewBank(f, items)
	if err != nil {
		t.Fatal(err)
	}
	return bk, items
}

// TestNextPolytomousIsTheBestCandidate: on a bank mixing dichotomous and polytomous items, Next's
// item is the best candidate of an independent scan (information V/s² for a polytomous item,
// E/m against a target), ties by the lower id, with answers that score polytomous items.
func TestNextPolytomousIsTheBestCandidate(t *testing.T) {
	t.Parallel()
	bk, items := pcmBank(t, false)
	poly := 0
	for _, it := range items {
		if it.Polytomous() {
			poly++
		}
	}
	if poly < 60 {
		t.Fatalf("%d polytomous items; want at least 60", poly)
	}
	var answers []Response
	for i, it := range items[:40] {
		answers = append(answers, Response{ID: it.ID, Score: i % (it.MaxScore() + 1)})
	}
	polyIDs := func(n int) []string {
		var ids []string
		for _, it := range items {
			if it.Polytomous() && len(ids) < n {
				ids = append(ids, it.ID)
			}
		}
		return ids
	}
	pool := append(polyIDs(6), "I0005", "I0006", "I0100", "I0200")
	cases := []struct {
		name string
		req  AdaptiveRequest
	}{
		{"nothing answered", AdaptiveRequest{}},
		{"40 answered", AdaptiveRequest{Items: answers, Stop: StopRules{MaxItems: ptr(100)}}},
		{"low prior", AdaptiveRequest{PriorAbility: ptr(-300.0), PriorUncertainty: ptr(50.0)}},
		{"high prior", AdaptiveRequest{PriorAbility: ptr(1400.0), PriorUncertainty: ptr(50.0)}},
		{"far above", AdaptiveRequest{PriorAbility: ptr(5000.0), PriorUncertainty: ptr(10.0)}},
		{"target 0.75", AdaptiveRequest{Items: answers[:10], TargetSuccess: ptr(0.75)}},
		{"target 0.3", AdaptiveRequest{Items: answers[:10], TargetSuccess: ptr(0.3)}},
		{"pool", AdaptiveRequest{Pool: pool, Items: answers[:3]}},
		{"pool, target 0.6", AdaptiveRequest{Pool: pool, TargetSuccess: ptr(0.6)}},
		{"one strand", AdaptiveRequest{Items: answers[:20], Strands: map[string]float64{"B": 1}}},
		{"exclude", AdaptiveRequest{Exclude: polyIDs(30)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			step := mustNext(t, bk, &c.req)
			if step.Next == nil {
				t.Fatalf("stopped (%q); want an item", step.StopReason)
			}
			target := 0.0
			if c.req.TargetSuccess != nil {
				target = *c.req.TargetSuccess
			}
			want, key, ok := scanBest(bk.Framework(), items, step.Estimate.Ability, target, &c.req)
			if !ok {
				t.Fatal("the scan found no candidate")
			}
			if step.Next.ID != want.ID {
				t.Errorf("next %s (steps %v); want %s (steps %v, key %v) at ability %v",
					step.Next.ID, step.Next.Steps, want.ID, want.Steps, key, step.Estimate.Ability)
			}
			if step.Next.MaxScore() != want.MaxScore() {
				t.Errorf("next max score %d; want %d", step.Next.MaxScore(), want.MaxScore())
			}
		})
	}
	// The estimate counts the polytomous answers' points: it is Bayes on TestOf's test.
	req := AdaptiveRequest{Items: answers, Stop: StopRules{MaxItems: ptr(100)}}
	step := mustNext(t, bk, &req)
	var as []Answer
	for _, r := range answers {
		it, _ := bk.Item(r.ID)
		as = append(as, Answer{Item: it, Score: r.Score})
	}
	want, err := bk.Framework().Bayes(TestOf(as), step.Prior)
	if err != nil || step.Estimate != want {
		t.Errorf("estimate %v; want Bayes %v (%v)", step.Estimate, want, err)
	}
}

// TestNextPolytomousResult: a score above an item's maximum or below 0 is a problem under
// items[i].result naming the maximum; the maximum itself is taken.
func TestNextPolytomousResult(t *testing.T) {
	t.Parallel()
	bk := tinyBank(t, Item{ID: "P", Difficulty: 500, Steps: []float64{400, 600}}, Item{ID: "D", Difficulty: 450})
	for _, tc := range []struct {
		name  string
		items []Response
		want  string
	}{
		{"above a polytomous maximum", []Response{{ID: "D"}, {ID: "P", Score: 3}}, `items[1].result: must be 0 … 2 (the maximum score of item "P"), got 3`},
		{"above a dichotomous maximum", []Response{{ID: "D", Score: 2}}, `items[0].result: must be 0 … 1 (the maximum score of item "D"), got 2`},
		{"below 0", []Response{{ID: "P", Score: -1}}, `items[0].result: must be 0 … 2 (the maximum score of item "P"), got -1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := bk.Next(&AdaptiveRequest{Items: tc.items})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
	step, err := bk.Next(&AdaptiveRequest{Items: []Response{{ID: "P", Score: 2}}})
	if err != nil || step.Next == nil || step.Next.ID != "D" || step.Next.MaxScore() != 1 {
		t.Errorf("got %+v, %v; want next D with max score 1", step, err)
	}
	step, err = bk.Next(&AdaptiveRequest{Items: []Response{{ID: "D", Correct: true}}})
	if err != nil || step.Next == nil || step.Next.ID != "P" || step.Next.MaxScore() != 2 {
		t.Errorf("got %+v, %v; want next P with max score 2", step, err)
	}
}

// TestAdaptivePolytomousFewerItems: with a fifth of the bank's items polytomous (0–2 and 0–3),
// sessions stopping at targetUncertainty 60 take fewer items on average than on the same bank
// with those items dichotomized (each a dichotomous item at its location), and both keep §11's
// coverage and calibration of the reported SD.
func TestAdaptivePolytomousFewerItems(t *testing.T) {
	t.Parallel()
	target, maxItems := 60.0, 200
	settings := AdaptiveRequest{Stop: StopRules{TargetUncertainty: &target, MaxItems: &maxItems}}
	var reps [2]SimulationReport
	for i, dichotomized := range []bool{false, true} {
		bk, _ := pcmBank(t, dichotomized)
		rep, err := bk.Simulate(context.Background(), Simulation{Students: 1000, Seed: 28, Settings: settings,
			Population: Normal{Mean: 600, SD: 300}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = rep
		t.Logf("dichotomized %v: length %.2f, RMSE %.1f, mean SD %.1f, coverage %.3f, stops %v",
			dichotomized, rep.MeanLength, rep.RMSE, rep.MeanSD, rep.Coverage, rep.StopReasons)
		if c := rep.Coverage; c < 0.93 || c > 0.97 {
			t.Errorf("dichotomized %v: coverage %.3f; want 0.93–0.97", dichotomized, c)
		}
		if ratio := rep.MeanSD / rep.RMSE; ratio < 0.9 || ratio > 1.1 {
			t.Errorf("dichotomized %v: mean SD %.1f is %.3f of the RMSE %.1f; want 0.9–1.1", dichotomized, rep.MeanSD, ratio, rep.RMSE)
		}
	}
	if reps[0].MeanLength >= reps[1].MeanLength {
		t.Errorf("with polytomous items %.2f items on average; want fewer than the dichotomized bank's %.2f", reps[0].MeanLength, reps[1].MeanLength)
	}
}

// TestBestWithPolytomousIsTheTopK: the selection's k best on a mixed bank — the walk over the
// dichotomous items, the scan of the partial credit ones and the bounds that skip hopeless ones —
// are exactly the k best of all the items ranked by the same keys, ties by id, under maximum
// information and targets, across the scale and beyond it, with items used.
func TestBestWithPolytomousIsTheTopK(t *testing.T) {
	t.Parallel()
	mixed, items := pcmBank(t, false)
	var polyItems []Item
	for _, it := range items {
		if it.Polytomous() {
			polyItems = append(polyItems, it)
		}
	}
	onlyPoly, err := NewBank(mixed.fw, polyItems)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		bk   *Bank
		used []int32
	}{{"mixed", mixed, []int32{3, 50, 51, 200}}, {"partial credit only", onlyPoly, []int32{3, 20, 21, 60}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkTopK(t, c.bk, c.used)
		})
	}
}

// checkTopK is TestBestWithPolytomousIsTheTopK on one bank.
func checkTopK(t *testing.T, bk *Bank, used []int32) {
	p, _ := bk.fw.prepared()
	skipped := 0
	for _, target := range []float64{0, 0.2, 0.5, 0.75, 0.95} {
		for theta := -2000.0; theta <= 3000; theta += 37 {
			for _, k := range []int{1, 3, 8} {
				sel := &selector{theta: theta, s: p.s, lambda: p.lambda, target: target}
				got := sel.best(bk.all, bk.pidx, bk.dich, bk.poly, used, k, nil)
				var all []candidate
				for pos := range bk.all {
					if contains(used, int32(pos)) {
						continue
					}
					it := bk.all[pos]
					key := sel.key(it.Difficulty)
					if it.Polytomous() {
						key = sel.polyKey(it.Steps)
						if h := (&hopeless{sel: sel, limit: got[len(got)-1].key}); len(got) == k && h.far(it.Steps) {
							skipped++
						}
					}
					all = append(all, candidate{int32(pos), key})
				}
				want := sortCandidates(sel, bk.all, all, 0, k)
				if len(got) != len(want) {
					t.Fatalf("target %v θ %v k %d: %d candidates; want %d", target, theta, k, len(got), len(want))
				}
				for i := range want {
					if got[i].pos != want[i].pos {
						t.Errorf("target %v θ %v k %d: #%d is %s (key %v); want %s (key %v)", target, theta, k, i,
							bk.all[got[i].pos].ID, got[i].key, bk.all[want[i].pos].ID, want[i].key)
						break
					}
				}
			}
		}
	}
	if skipped == 0 {
		t.Error("the bounds never skipped an item; the test does not exercise them")
	}
	t.Logf("%d partial credit keys skipped by the bounds", skipped)
}
