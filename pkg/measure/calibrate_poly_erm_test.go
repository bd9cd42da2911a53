package measure

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ermStep is one step of an eRm polytomous reference file (testdata/calibrate/*.MODEL.erm.csv,
// written by erm_pcm.R).
type ermStep struct {
	item                         string
	step                         int
	threshold, se, infit, outfit float64
}

// readERmSteps reads NAME.MODEL.erm.csv and eRm's log-likelihood from its header comment.
func readERmSteps(t *testing.T, name, model string) ([]ermStep, float64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "calibrate", name+"."+model+".erm.csv"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`log L (-?[0-9.]+);`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no log L in the header comment")
	}
	logL, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(string(data)))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "item,step,threshold,se,infit,outfit" {
		t.Fatalf("header %q", got)
	}
	var rows []ermStep
	for _, rec := range recs[1:] {
		step, err := strconv.Atoi(rec[1])
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, 4)
		for j := range v {
			if v[j], err = strconv.ParseFloat(rec[j+2], 64); err != nil {
				t.Fatal(err)
			}
		}
		rows = append(rows, ermStep{rec[0], step, v[0], v[1], v[2], v[3]})
	}
	return rows, logL
}

// TestCalibratePolytomousMatchesERm compares the partial credit and rating scale calibrations
// with R's eRm 1.0-2 (PCM, RSM; testdata/calibrate/erm_pcm.R, its README) on four simulated
// data sets with blank cells: 20 items of 3, 4 and 5 categories in 4 overlapping booklets (plus
// 1% random blanks), 15 items of 2, 3 and 5 categories in 3 booklets (a 0/1 item's one step,
// its location, has eRm's se.thresh as its SE), 12 items of 4 categories with 30% of the cells blank at random (nearly
// every person a booklet of their own), and 30 items of 5 categories in 3 booklets of 20 for
// 3,000 persons. eRm's thresholds, centred as ours are (the item locations, the means of their
// steps, sum to zero), agree within 1e-4 logits; its se.thresh within 0.5% (eRm's Hessian is
// nlm's, by differences; the plain pseudo-inverse, the wrong constraint, is more than 1% off);
// its itemfit mean squares within 1e-3 (eRm's person estimates are nlm's). Our
// conditional log-likelihood at eRm's thresholds is eRm's own figure (the same function), and
// at ours it is at least as high, with a zero gradient.
func TestCalibratePolytomousMatchesERm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, model string }{
		{"pcm_mixed", ModelPCM}, {"pcm_binary", ModelPCM}, {"rating4", ModelPCM}, {"rating4", ModelRSM}, {"rating5", ModelPCM}, {"rating5", ModelRSM},
	} {
		t.Run(c.name+"/"+c.model, func(t *testing.T) {
			t.Parallel()
			resp := readResponsesFile(t, c.name+".csv")
			blank, cells := 0, 0
			for _, row := range resp.Cells {
				for _, x := range row {
					cells++
					if x == Missing {
						blank++
					}
				}
			}
			if frac := float64(blank) / float64(cells); frac < 0.25 {
				t.Fatalf("%.1f%% blank; the reference sets must have at least 25%%", 100*frac)
			}
			cal, err := Calibrate(context.Background(), resp, CalibrateOptions{Model: c.model})
			if err != nil {
				t.Fatal(err)
			}
			want, logL := readERmSteps(t, c.name, c.model)
			if cal.Model != c.model || len(cal.Dropped) != 0 {
				t.Fatalf("model %s, dropped %v; want %s and nothing dropped", cal.Model, cal.Dropped, c.model)
			}
			// eRm's thresholds, centred: the mean of the item locations subtracted from every step.
			locSum, items := map[string]float64{}, map[string]int{}
			for _, w := range want {
				locSum[w.item] += w.threshold
				items[w.item]++
			}
			shift := 0.0
			for id, s := range locSum {
				shift += s / float64(items[id]) / float64(len(locSum))
			}
			var ours, theirs []float64
			row := 0
			worstSE, worstStep, worstFit := 0.0, 0.0, 0.0
			for _, it := range cal.Items {
				steps := it.Steps
				if steps == nil { // a one-step item: its location is its step, with that step's SE
					steps = []CalibratedStep{{Logit: it.Logit, SE: it.SE}}
				}
				for k, s := range steps {
					if row >= len(want) {
						t.Fatalf("more steps than eRm's %d", len(want))
					}
					w := want[row]
					row++
					if w.item != it.ID || w.step != k+1 {
						t.Fatalf("step %d of %s; eRm's row is step %d of %s", k+1, it.ID, w.step, w.item)
					}
					ours = append(ours, s.Logit)
					theirs = append(theirs, w.threshold-shift)
					d := math.Abs(s.Logit - (w.threshold - shift))
					worstStep = math.Max(worstStep, d)
					if d > 1e-4 {
						t.Errorf("%s step %d: got %.8f; want eRm's %.8f (±1e-4)", it.ID, k+1, s.Logit, w.threshold-shift)
					}
					rel := math.Abs(s.SE/w.se - 1)
					worstSE = math.Max(worstSE, rel)
					if rel > 0.005 {
						t.Errorf("%s step %d: SE %.6f; want eRm's %.6f (±0.5%%)", it.ID, k+1, s.SE, w.se)
					}
				}
				w := want[row-1]
				worstFit = math.Max(worstFit, math.Max(math.Abs(it.Infit-w.infit), math.Abs(it.Outfit-w.outfit)))
				if math.Abs(it.Infit-w.infit) > 1e-3 || math.Abs(it.Outfit-w.outfit) > 1e-3 {
					t.Errorf("%s: infit %.6f outfit %.6f; want eRm's %.6f %.6f (±1e-3)", it.ID, it.Infit, it.Outfit, w.infit, w.outfit)
				}
			}
			if row != len(want) {
				t.Fatalf("%d steps; eRm has %d", row, len(want))
			}
			t.Logf("largest differences from eRm: step %.2g logits, SE %.2g (relative), fit %.2g", worstStep, worstSE, worstFit)
			// The SE tolerance tells eRm's constraint from the plain pseudo-inverse (the thresholds
			// summing to zero), whose SEs are a few per cent off.
			top := make([]int, len(resp.Items))
			high := 0
			for _, row := range resp.Cells {
				for i, x := range row {
					top[i] = max(top[i], int(x))
					high = max(high, int(x))
				}
			}
			if c.model == ModelRSM {
				for i := range top {
					top[i] = high
				}
			}
			d := pruneScores(resp, top, c.model == ModelRSM)
			pe := newPEstimation(d, d.keptItems(), c.model == ModelRSM)
			if _, err := pe.newton(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			cov, err := pe.thresholdCov()
			if err != nil {
				t.Fatal(err)
			}
			ones := make([]float64, len(want))
			for h := range ones {
				ones[h] = 1
			}
			plainOff := 0.0
			for h, se := range constrainedSE(cov, ones) {
				plainOff = math.Max(plainOff, math.Abs(se/want[h].se-1))
			}
			if plainOff < 0.01 {
				t.Errorf("the plain pseudo-inverse's SEs are within %.4f of eRm's; want the test to tell them apart (> 0.01)", plainOff)
			}
			t.Logf("the plain pseudo-inverse's SEs are up to %.3f off", plainOff)
			// The same likelihood, and our estimate its better optimum.
			est := newPEstimation(pruneScores(resp, top, false), d.keptItems(), false)
			fOurs, gOurs, _, err := est.derivatives(context.Background(), ours, hessNone)
			if err != nil {
				t.Fatal(err)
			}
			fTheirs, _, _, err := est.derivatives(context.Background(), theirs, hessNone)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(-fTheirs-logL) > 1e-6*math.Abs(logL) {
				t.Errorf("log L at eRm's thresholds %.10f; eRm's own %.10f", -fTheirs, logL)
			}
			if fOurs > fTheirs {
				t.Errorf("−log L at our estimate %v is above eRm's %v", fOurs, fTheirs)
			}
			if c.model == ModelRSM { // the gradient in the rating scale model's own parameters: Wᵀg
				w := newPEstimation(d, d.keptItems(), true).designMatrix()
				q := len(w) / len(gOurs)
				g := make([]float64, q)
				for h, gh := range gOurs {
					for j := range q {
						g[j] += w[h*q+j] * gh
					}
				}
				gOurs = g
			}
			for k, g := range gOurs {
				if math.Abs(g) > 1e-8 {
					t.Errorf("gradient %d at our estimate = %v; want 0", k, g)
				}
			}
		})
	}
}
