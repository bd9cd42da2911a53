package measure

import (
	"context"
	"math"
	"strings"
	"testing"
)

func calibrated(t *testing.T, name string) *Calibration {
	t.Helper()
	cal, err := Calibrate(context.Background(), readResponsesFile(t, name), CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cal
}

// TestOnScaleMean: the items' mean is the target, differences are s·Δlogit, and the framework's
// model at the placed difficulties reproduces the Rasch probabilities of the calibration:
// a person of logit θ at measure s·θ + shift answers item i with P = 1/(1 + e^(β_i − θ)).
func TestOnScaleMean(t *testing.T) {
	t.Parallel()
	cal := calibrated(t, "booklets.csv")
	for _, name := range []string{"lexile", "quantile"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := testFramework(t, name)
			sc, err := cal.OnScaleMean(f, 640)
			if err != nil {
				t.Fatal(err)
			}
			mean := 0.0
			for k, d := range sc.Difficulty {
				mean += d / float64(len(sc.Difficulty))
				if got, want := d-sc.Difficulty[0], 180*(cal.Items[k].Logit-cal.Items[0].Logit); math.Abs(got-want) > 1e-9 {
					t.Errorf("%s − %s = %v; want s·Δlogit = %v", cal.Items[k].ID, cal.Items[0].ID, got, want)
				}
				for _, theta := range []float64{-2, 0, 1.5} {
					got := f.Probability(180*theta+sc.Shift, d)
					want := 1 / (1 + math.Exp(cal.Items[k].Logit-theta))
					if math.Abs(got-want) > 1e-12 {
						t.Errorf("%s θ=%v: framework P %v; Rasch P %v", cal.Items[k].ID, theta, got, want)
					}
				}
			}
			if math.Abs(mean-640) > 1e-9 {
				t.Errorf("mean difficulty %v; want 640", mean)
			}
			if len(sc.Anchors) != 0 {
				t.Errorf("anchors %v; want none with a target mean", sc.Anchors)
			}
		})
	}
	if _, err := cal.OnScaleMean(testFramework(t, "lexile"), math.NaN()); err == nil {
		t.Error("NaN target mean: got no error")
	}
}

// TestOnScaleAnchorsRecoversShift: anchors whose bank values are the calibration's own
// difficulties moved by a known shift give back exactly that shift, with zero displacements;
// moving one of four anchors by 40 moves the shift by 10 and shows as that anchor's displacement.
func TestOnScaleAnchorsRecoversShift(t *testing.T) {
	t.Parallel()
	cal := calibrated(t, "wide.csv")
	f := testFramework(t, "lexile")
	ref, err := cal.OnScaleMean(f, 800)
	if err != nil {
		t.Fatal(err)
	}
	const known = 37.25
	bank := map[string]float64{}
	for _, k := range []int{3, 17, 30, 44} {
		bank[cal.Items[k].ID] = ref.Difficulty[k] + known
	}
	bank["NOT-IN-DATA"] = 5000 // ignored: not calibrated
	sc, err := cal.OnScaleAnchors(f, bank)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Shift - ref.Shift; math.Abs(got-known) > 1e-9 {
		t.Errorf("recovered shift %v; want %v", got, known)
	}
	for k, d := range sc.Difficulty {
		if math.Abs(d-(ref.Difficulty[k]+known)) > 1e-9 {
			t.Errorf("%s: %v; want %v", cal.Items[k].ID, d, ref.Difficulty[k]+known)
		}
	}
	if len(sc.Anchors) != 4 {
		t.Fatalf("anchors %v; want 4", sc.Anchors)
	}
	for _, a := range sc.Anchors {
		if math.Abs(a.Displacement) > 1e-9 || a.Bank != bank[a.ID] {
			t.Errorf("anchor %+v; want displacement 0 and bank %v", a, bank[a.ID])
		}
	}
	moved := cal.Items[17].ID
	bank[moved] += 40
	sc, err = cal.OnScaleAnchors(f, bank)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Shift - ref.Shift; math.Abs(got-(known+10)) > 1e-9 {
		t.Errorf("shift with one anchor moved by 40: %v; want %v", got, known+10)
	}
	for _, a := range sc.Anchors {
		want := 10.0
		if a.ID == moved {
			want = -30
		}
		if math.Abs(a.Displacement-want) > 1e-9 || math.Abs(a.Calibrated-a.Bank-a.Displacement) > 1e-9 {
			t.Errorf("anchor %+v; want displacement %v", a, want)
		}
	}
	if _, err := cal.OnScaleAnchors(f, map[string]float64{"NOPE": 1}); err == nil || !strings.Contains(err.Error(), "no calibrated item is an anchor") {
		t.Errorf("no anchors: got %v", err)
	}
	if _, err := cal.OnScaleAnchors(f, map[string]float64{cal.Items[0].ID: math.Inf(1)}); err == nil {
		t.Error("infinite bank value: got no error")
	}
}
