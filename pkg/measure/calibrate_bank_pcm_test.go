package measure

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// pcmBankData: 600 persons × 10 items (ids given) in 2 overlapping booklets; items 0–8 scored
// 0–2 or 0–3, the last item 0/1.
func pcmBankData(ids []string) *Responses {
	rng := rand.New(rand.NewPCG(5, 6))
	steps := [][]float64{{-1.8, -0.6}, {-1.2, -0.3, 0.5}, {-0.9, 0.2}, {-0.6, 0, 0.9}, {-0.3, 0.6},
		{-0.2, 0.3, 1.1}, {0.1, 1}, {0.2, 0.6, 1.5}, {0.8, 1.6}, {0.4}}
	r := simulatePCM(rng, 600, steps, 0, 1.2, cyclicBooklets(10, 2))
	r.Items = ids
	return r
}

// TestCalibrateBankPolytomous: a partial credit calibration on the framework scale. Each step is
// d = s·(δ + λ) + shift (lexile: λ = ln 3), the item's difficulty the mean of its steps, the
// target mean that of the difficulties; the new items carry the steps (the 0/1 item none); the
// report names the model and gives steps only for polytomous items.
func TestCalibrateBankPolytomous(t *testing.T) {
	t.Parallel()
	ids := []string{"P01", "P02", "P03", "P04", "P05", "P06", "P07", "P08", "P09", "D10"}
	rep, items, err := CalibrateBank(context.Background(), BankJob{Responses: pcmBankData(ids), Framework: "lexile", Base: Demo(), Mean: 800})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Model != ModelPCM || len(rep.Items) != 10 || len(items) != 10 {
		t.Fatalf("model %q, %d report items, %d new; want pcm, 10, 10", rep.Model, len(rep.Items), len(items))
	}
	lambda := math.Log(3)
	mean, shift := 0.0, 800-180*lambda // the locations sum to zero
	for k, it := range items {
		r := rep.Items[k]
		mean += it.Difficulty / 10
		if math.Abs(r.Difficulty-(180*(r.Logit+lambda)+shift)) > 1e-9 || it.Difficulty != r.Difficulty {
			t.Errorf("%s difficulty %v (bank %v); want 180·(%v + ln 3) + %v", r.ID, r.Difficulty, it.Difficulty, r.Logit, shift)
		}
		if k == 9 {
			if r.Steps != nil || it.Steps != nil {
				t.Errorf("%s is scored 0/1: steps %v, %v; want none", r.ID, r.Steps, it.Steps)
			}
			continue
		}
		if want := 2 + k%2; len(r.Steps) != want || len(it.Steps) != want {
			t.Fatalf("%s: %d steps, bank %d; want %d", r.ID, len(r.Steps), len(it.Steps), want)
		}
		sum := 0.0
		for h, st := range r.Steps {
			sum += st.Difficulty
			if math.Abs(st.Difficulty-(180*(st.Logit+lambda)+shift)) > 1e-9 || it.Steps[h] != st.Difficulty || !(st.SE > 0) {
				t.Errorf("%s step %d: %+v, bank %v; want difficulty 180·(logit + ln 3) + %v and an SE", r.ID, h+1, st, it.Steps[h], shift)
			}
		}
		if math.Abs(sum/float64(len(r.Steps))-r.Difficulty) > 1e-9 {
			t.Errorf("%s: steps' mean %v; want the difficulty %v", r.ID, sum/float64(len(r.Steps)), r.Difficulty)
		}
	}
	if math.Abs(mean-800) > 1e-9 {
		t.Errorf("mean difficulty %v; want 800", mean)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(body), `{"model":"pcm","items":[{"id":"P01","logit":`) || strings.Count(string(body), `"steps":`) != 9 ||
		!strings.Contains(string(body), `"steps":[{"logit":`) {
		t.Errorf("report %.300s…; want model pcm first and steps [{logit, se, difficulty}] on the 9 polytomous items", body)
	}
	// The Rasch report has no model and no steps: as before.
	rasch, _, err := CalibrateBank(context.Background(), BankJob{Responses: bankData([]string{"N01", "N02", "N03", "N04", "N05", "N06", "N07", "N08", "N09", "N10", "N11", "N12"}),
		Framework: "quantile", Base: Demo(), Mean: 700})
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := json.Marshal(rasch); !strings.HasPrefix(string(body), `{"items":[{"id":"N01","logit":`) || strings.Contains(string(body), "steps") {
		t.Errorf("Rasch report %.200s…; want no model and no steps", body)
	}
}

// withItems returns a copy of bundle b holding extra items as well (a bank with polytomous items,
// whatever the loader of this build reads).
func withItems(b *Bundle, extra ...Item) *Bundle {
	c := *b
	c.items = maps.Clone(b.items)
	for _, it := range extra {
		c.items[it.ID] = it
	}
	return &c
}

// TestCalibrateBankPolytomousAnchors: polytomous anchors fix the shift by mean-mean linking on
// their locations (the mean of their bank steps): their calibrated mean equals their bank mean,
// and every new item is placed by the same shift. An anchor scored 0–3 in the bank but 0–2 in
// the data (nobody reached 3) is refused, named, since its location is another quantity.
func TestCalibrateBankPolytomousAnchors(t *testing.T) {
	t.Parallel()
	ids := []string{"A01", "A02", "A03", "N04", "N05", "N06", "N07", "N08", "N09", "N10"}
	bankSteps := map[string][]float64{"A01": {300, 500}, "A02": {420, 560, 700}, "A03": {480, 640}}
	var anchors []Item
	for _, id := range []string{"A01", "A02", "A03"} {
		anchors = append(anchors, Item{ID: id, Framework: "quantile", Strand: "Number", Difficulty: stepMean(bankSteps[id]), Steps: bankSteps[id]})
	}
	base := withItems(Demo(), anchors...)
	rep, items, err := CalibrateBank(context.Background(), BankJob{Responses: pcmBankData(ids), Framework: "quantile", Base: base, Anchored: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Anchors) != 3 || len(items) != 7 {
		t.Fatalf("%d anchors, %d new items; want 3 and 7", len(rep.Anchors), len(items))
	}
	bankMean := (400 + 560 + 560) / 3.0
	calMean, logitMean := 0.0, 0.0
	for k, a := range rep.Anchors {
		if a.ID != ids[k] || a.Bank != stepMean(bankSteps[a.ID]) || a.Calibrated != rep.Items[k].Difficulty {
			t.Errorf("anchor %+v; want %s at bank %v", a, ids[k], stepMean(bankSteps[a.ID]))
		}
		calMean += a.Calibrated / 3
		logitMean += rep.Items[k].Logit / 3
	}
	if math.Abs(calMean-bankMean) > 1e-9 {
		t.Errorf("anchors' calibrated mean %v; want their bank mean %v", calMean, bankMean)
	}
	shift := bankMean - 180*logitMean // quantile: λ = 0
	for k, it := range items {
		r := rep.Items[k+3]
		if it.ID != r.ID || math.Abs(it.Difficulty-(180*r.Logit+shift)) > 1e-9 {
			t.Errorf("%s: %v; want 180·%v + %v", it.ID, it.Difficulty, r.Logit, shift)
		}
	}
	// A02 scored 0–4 in the bank: the data's 0–3 is another scale of the item.
	base = withItems(Demo(), anchors[0], Item{ID: "A02", Framework: "quantile", Strand: "Number", Difficulty: 560, Steps: []float64{400, 500, 600, 740}}, anchors[2])
	_, _, err = CalibrateBank(context.Background(), BankJob{Responses: pcmBankData(ids), Framework: "quantile", Base: base, Anchored: true})
	if want := "anchor A02 is scored 0–4 in the bank but 0–3 in the data (its highest score there): its location is not comparable; take it out of the data or give it a new id"; err == nil || err.Error() != want {
		t.Errorf("got %v; want %q", err, want)
	}
}
