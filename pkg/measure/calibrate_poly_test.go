package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestCalibratePolytomousOnDichotomous: a 0/1 file calibrated by the partial credit or rating
// scale model is the Rasch calibration (one step per item): the same logits, SEs, fit and
// covariance within 1e-9, no steps reported; the default model for it stays the Rasch path.
func TestCalibratePolytomousOnDichotomous(t *testing.T) {
	t.Parallel()
	resp := readResponsesFile(t, "random.csv")
	base, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if base.Model != ModelRasch {
		t.Errorf("default model for a 0/1 file: %q; want rasch", base.Model)
	}
	for _, model := range []string{ModelPCM, ModelRSM} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			got, err := Calibrate(context.Background(), resp, CalibrateOptions{Model: model})
			if err != nil {
				t.Fatal(err)
			}
			if got.Model != model || got.Persons != base.Persons || len(got.Items) != len(base.Items) {
				t.Fatalf("model %s, %d persons, %d items; want %s, %d, %d", got.Model, got.Persons, len(got.Items), model, base.Persons, len(base.Items))
			}
			for k, it := range got.Items {
				b := base.Items[k]
				if it.ID != b.ID || it.Steps != nil || it.N != b.N || math.Abs(it.Logit-b.Logit) > 1e-9 || math.Abs(it.SE-b.SE) > 1e-9 ||
					math.Abs(it.Infit-b.Infit) > 1e-9 || math.Abs(it.Outfit-b.Outfit) > 1e-9 {
					t.Errorf("got %+v; want the Rasch %+v", it, b)
				}
			}
			for i := range got.Cov {
				if math.Abs(got.Cov[i]-base.Cov[i]) > 1e-9 {
					t.Fatalf("Cov[%d] = %v; want the Rasch %v", i, got.Cov[i], base.Cov[i])
				}
			}
		})
	}
}

// TestCalibrateModelChoice: "" is the Rasch model for 0/1 cells and the partial credit model
// otherwise; the Rasch model asked for on a file with a 2 names the first such cell; an unknown
// model is refused.
func TestCalibrateModelChoice(t *testing.T) {
	t.Parallel()
	resp := &Responses{Items: []string{"A", "B", "C"}, Persons: []string{"p1", "p2", "p3", "p4", "p5"},
		Cells: [][]int8{{1, 0, 1}, {0, 1, 0}, {1, 2, 0}, {0, 1, 1}, {2, 0, 0}}}
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil || cal.Model != ModelPCM {
		t.Fatalf("got %v, %v; want a pcm calibration", cal, err)
	}
	for _, c := range []struct{ model, want string }{
		{ModelRasch, "calibrate: the Rasch model takes 0/1 responses, and person p3 scored 2 on item B; use the partial credit (pcm) or rating scale (rsm) model"},
		{"grm", `calibrate: model "grm"; want rasch, pcm or rsm`},
	} {
		if _, err := Calibrate(context.Background(), resp, CalibrateOptions{Model: c.model}); err == nil || err.Error() != c.want {
			t.Errorf("model %q: got %v; want %q", c.model, err, c.want)
		}
	}
}

// TestCalibratePolytomousDropsItems: an item lacking one of its categories 0 … m (m its highest
// score) is named and left out, before and after persons with zero or perfect scores are set
// aside, until stable; items scored 0/1 in the same file keep their reasons; the rating scale
// model asks every item for the file's categories.
func TestCalibratePolytomousDropsItems(t *testing.T) {
	t.Parallel()
	ids := []string{"A", "B", "C", "GAP", "ALLZERO", "TOPLATER", "D"}
	rows := []string{
		// A B C GAP ALLZERO TOPLATER D
		"0120" + "0" + "1" + "1",
		"1210" + "0" + "0" + "0",
		"2001" + "0" + "1" + "1",
		"1123" + "." + "0" + "0",
		"0213" + "0" + "1" + "1",
		"2100" + "0" + "0" + "1",
		"2..." + "." + "2" + ".", // perfect on A and TOPLATER: set aside, and TOPLATER's 2 goes with them
		"0021" + "0" + "1" + "0",
	}
	resp := &Responses{Items: ids}
	for p, s := range rows {
		row := make([]int8, len(s))
		for i, c := range s {
			if c == '.' {
				row[i] = Missing
			} else {
				row[i] = int8(c - '0')
			}
		}
		resp.Persons = append(resp.Persons, fmt.Sprintf("P%d", p+1))
		resp.Cells = append(resp.Cells, row)
	}
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []DroppedItem{
		{"GAP", "score 2 never observed in the 7 persons who took it (an item scored 0–3 needs every category observed)"},
		{"ALLZERO", "answered wrongly by all 6 persons who took it"},
		{"TOPLATER", "score 2 not observed once those with zero or perfect scores are left out (7 persons; an item scored 0–2 needs every category observed)"},
	}
	if !reflect.DeepEqual(cal.Dropped, want) {
		t.Errorf("dropped:\n got %v\nwant %v", cal.Dropped, want)
	}
	var got []string
	for _, it := range cal.Items {
		got = append(got, fmt.Sprintf("%s:%d", it.ID, len(it.Steps)))
	}
	if want := []string{"A:2", "B:2", "C:2", "D:0"}; !reflect.DeepEqual(got, want) || cal.Persons != 7 {
		t.Errorf("calibrated %v from %d persons; want %v (items:steps) from 7", got, cal.Persons, want)
	}
	// The rating scale model scores every item 0–3 here, the file's highest: A, B, C and D lack 3.
	_, err = Calibrate(context.Background(), resp, CalibrateOptions{Model: ModelRSM})
	if err == nil || !strings.Contains(err.Error(), "only 0 of 7 items can be estimated") ||
		!strings.Contains(err.Error(), "A: score 3 never observed in the 8 persons who took it (the rating scale model scores every item of the file 0–3 and needs every category observed)") {
		t.Errorf("rsm: got %v; want every item dropped, A for its missing 3", err)
	}
}

func TestUnobserved(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{[]int{1, 2, 3}, ""},
		{[]int{1, 0, 3}, "score 1"},
		{[]int{0, 1, 1, 0}, "scores 0 and 3"},
		{[]int{1, 0, 0, 2, 0}, "scores 1, 2 and 4"},
	} {
		if got := unobserved(c.counts); got != c.want {
			t.Errorf("unobserved(%v) = %q; want %q", c.counts, got, c.want)
		}
	}
}

// TestCalibratePolytomousDesignErrors: the booklet and existence checks hold for items scored
// 0 … m: two groups of items nobody links, and a group whose items nobody scored above 0 while
// scoring below the top on the others (Fischer's condition with "right" a score above 0 and
// "wrong" one below the top). Data that pass both checks and still leave a step undetermined
// are an error, not an answer.
func TestCalibratePolytomousDesignErrors(t *testing.T) {
	t.Parallel()
	disconnected := &Responses{Items: []string{"A", "B", "C", "D"},
		Cells: [][]int8{{0, 2, Missing, Missing}, {2, 1, Missing, Missing}, {1, 0, Missing, Missing},
			{Missing, Missing, 0, 2}, {Missing, Missing, 2, 1}, {Missing, Missing, 1, 0}}}
	// Whoever scored below 2 on A or B scored 0 on C and D: C and D could be infinitely hard.
	fischer := &Responses{Items: []string{"A", "B", "C", "D"},
		Cells: [][]int8{{1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0}, {2, 1, 0, 0}, {1, 2, 0, 0},
			{2, 2, 1, 0}, {2, 2, 0, 1}, {2, 2, 1, 1}, {2, 2, 2, 0}, {2, 2, 0, 2}, {2, 2, 2, 1}, {2, 2, 1, 2}}}
	for _, c := range []struct {
		name   string
		resp   *Responses
		reason string
		parts  [][]string
	}{
		{"disconnected", disconnected, "the booklet design does not connect", [][]string{{"A", "B"}, {"C", "D"}}},
		{"Fischer's condition", fischer, "Fischer's condition", [][]string{{"A", "B"}, {"C", "D"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Calibrate(context.Background(), c.resp, CalibrateOptions{Model: ModelPCM})
			var de *DesignError
			if !errors.As(err, &de) {
				t.Fatalf("got %v; want a *DesignError", err)
			}
			if !strings.Contains(de.Reason, c.reason) || !reflect.DeepEqual(de.Components, c.parts) {
				t.Errorf("got %q %v; want %q %v", de.Reason, de.Components, c.reason, c.parts)
			}
		})
	}
}

// TestCalibratePolytomousUndetermined: two items scored 0–2, every category observed and the
// items linked both ways, but the only raw scores are 1 and 3: the persons compare A's first
// step with B's, and A's second with B's, never a first with a second, so one contrast of the
// four steps is free. The Newton system says so.
func TestCalibratePolytomousUndetermined(t *testing.T) {
	t.Parallel()
	resp := &Responses{Items: []string{"A", "B"}, Cells: [][]int8{{1, 0}, {0, 1}, {2, 1}, {1, 2}}}
	_, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if want := "calibrate: the information matrix is singular beyond the common shift (the design does not determine the thresholds)"; err == nil || err.Error() != want {
		t.Errorf("got %v; want %q", err, want)
	}
}

// TestCalibratePolytomousRecovery: data simulated from known steps (centred as eRm's constraint
// centres them, so that the reported SEs apply) in seeded replications of 500 persons × 10 items
// in 2 overlapping booklets (PCM: scored 0–2 and 0–3, 30 replications; RSM: 0–3 with one step
// structure, 150): the pooled share of the step intervals δ ± 1.96·SE and of the location
// intervals that hold the truth is 93–97%.
func TestCalibratePolytomousRecovery(t *testing.T) {
	t.Parallel()
	for _, model := range []string{ModelPCM, ModelRSM} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			// A rating scale replication's steps share its estimated τ, so their intervals hold
			// or miss together: more replications for the same precision of the share.
			reps, items := 30, 10
			if model == ModelRSM {
				reps = 150
			}
			stepsIn, stepsTotal, locIn, locTotal := 0, 0, 0, 0
			for rep := 0; rep < reps; rep++ {
				rng := rand.New(rand.NewPCG(uint64(rep), 13))
				steps := make([][]float64, items)
				tau := []float64{-0.8, 0.1, 0.7}
				for i := range steps {
					loc := -1.5 + 3*rng.Float64()
					m := 2 + i%2
					if model == ModelRSM {
						m = 3
					}
					for k := 0; k < m; k++ {
						d := loc + tau[k] + 0.3*rng.NormFloat64()
						if model == ModelRSM {
							d = loc + tau[k]
						}
						steps[i] = append(steps[i], d)
					}
				}
				resp := simulatePCM(rng, 500, steps, 0, 1.3, cyclicBooklets(items, 2))
				cal, err := Calibrate(context.Background(), resp, CalibrateOptions{Model: model})
				if err != nil {
					t.Fatalf("replication %d: %v", rep, err)
				}
				if len(cal.Items) != items {
					t.Fatalf("replication %d: %d items, dropped %v", rep, len(cal.Items), cal.Dropped)
				}
				// Centre truth and estimate alike: bᵀδ = 0 for the steps, Σ locations = 0 for these.
				var b, truth, est []float64
				trueLoc := make([]float64, items)
				for i, st := range steps {
					for k := range st {
						w := float64(len(st) - k)
						if model == ModelRSM {
							w = 0
							if k == 0 {
								w = 1
							}
						}
						b = append(b, w)
						truth = append(truth, st[k])
						est = append(est, cal.Items[i].Steps[k].Logit)
					}
					trueLoc[i] = stepMean(st)
				}
				centreOn(truth, b)
				centreOn(est, b)
				centre(trueLoc)
				h := 0
				for i, it := range cal.Items {
					for _, s := range it.Steps {
						stepsTotal++
						if math.Abs(est[h]-truth[h]) <= 1.96*s.SE {
							stepsIn++
						}
						h++
					}
					locTotal++
					if math.Abs(it.Logit-trueLoc[i]) <= 1.96*it.SE {
						locIn++
					}
				}
			}
			for _, c := range []struct {
				what      string
				in, total int
			}{{"steps", stepsIn, stepsTotal}, {"locations", locIn, locTotal}} {
				share := float64(c.in) / float64(c.total)
				if share < 0.93 || share > 0.97 {
					t.Errorf("%s: %d of %d intervals (%.3f) hold the truth; want 0.93–0.97", c.what, c.in, c.total, share)
				} else {
					t.Logf("%s: coverage %.4f (%d of %d)", c.what, share, c.in, c.total)
				}
			}
		})
	}
}

// centreOn shifts v by a constant so that bᵀv = 0.
func centreOn(v, b []float64) {
	bv, sb := 0.0, 0.0
	for i := range v {
		bv += b[i] * v[i]
		sb += b[i]
	}
	for i := range v {
		v[i] -= bv / sb
	}
}

// TestCalibratePolytomousProgressAndCancel: one progress report per Newton iteration, the last
// below the tolerance; a cancelled context stops the fit.
func TestCalibratePolytomousProgressAndCancel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	resp := simulatePCM(rng, 400, [][]float64{{-1, 0}, {-0.5, 0.5, 1}, {0, 1}, {-1, -0.2, 0.4}}, 0, 1, func(p, i int) bool { return true })
	var seen []CalibrateProgress
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{Progress: func(p CalibrateProgress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != cal.Iterations || seen[len(seen)-1].Iteration != cal.Iterations || seen[len(seen)-1].MaxChange >= calibrateTolerance {
		t.Errorf("progress %v for %d iterations; want one report per iteration, the last below tolerance", seen, cal.Iterations)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Calibrate(ctx, resp, CalibrateOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v; want context.Canceled", err)
	}
}

// TestPCMMomentsAndMLE: the fit's expected score and variance equal the definitions (direct
// sums) for ordered, disordered and far steps, stay finite 40 logits out, and reduce to the
// Rasch item for one step; the person MLE solves Σ E_i(θ) = r to 1e-10 at every inner score.
func TestPCMMomentsAndMLE(t *testing.T) {
	t.Parallel()
	direct := func(steps []float64, th float64) (float64, float64) {
		w := []float64{1}
		cum := 0.0
		for _, d := range steps {
			cum += th - d
			w = append(w, math.Exp(cum))
		}
		sum, e, e2 := 0.0, 0.0, 0.0
		for x, v := range w {
			sum += v
			e += float64(x) * v
			e2 += float64(x*x) * v
		}
		e /= sum
		return e, e2/sum - e*e
	}
	for _, steps := range [][]float64{{0.3}, {-1, 0.5}, {1, -1, 0}, {-0.5, 0.2, 0.9, 10}} {
		for _, th := range []float64{-3, -0.4, 0, 1.7, 5} {
			e, v, _ := pcmMoments(steps, th)
			we, wv := direct(steps, th)
			if math.Abs(e-we) > 1e-12 || math.Abs(v-wv) > 1e-12 {
				t.Errorf("steps %v at %v: E %v V %v; want %v %v", steps, th, e, v, we, wv)
			}
		}
		for _, th := range []float64{-40, 40} {
			if e, v, l := pcmMoments(steps, th); !Finite(e, v, l) || !(v > 0) {
				t.Errorf("steps %v at %v: E %v V %v log norm %v; want finite, V > 0", steps, th, e, v, l)
			}
		}
	}
	if e, v, _ := pcmMoments([]float64{0.3}, 1.1); math.Abs(e-1/(1+math.Exp(-0.8))) > 1e-15 || math.Abs(v-e*(1-e)) > 1e-15 {
		t.Errorf("one step: E %v V %v; want the Rasch P and P(1 − P)", e, v)
	}
	items := [][]float64{{-1, 0.5}, {1, -1, 0}, {0.3}, {-2, 2}}
	for r := 1; r < 8; r++ {
		th := pcmLogitMLE(items, r)
		sum := 0.0
		for _, st := range items {
			e, _, _ := pcmMoments(st, th)
			sum += e
		}
		if math.Abs(sum-float64(r)) > 1e-10 {
			t.Errorf("r = %d: Σ E(%v) = %v", r, th, sum)
		}
	}
}
