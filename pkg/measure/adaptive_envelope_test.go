package measure

import (
	"math"
	"testing"
)

// envCase is an item for the envelope's tests: its steps in logits from its difficulty.
type envCase struct {
	name  string
	steps []float64
	loose bool // bounded by infoCut alone (too many evaluations for the grid)
}

func envCases() []envCase {
	long := func(m int, gap float64) []float64 {
		out := make([]float64, m)
		for k := range out {
			out[k] = gap * (float64(k) - float64(m-1)/2)
		}
		return out
	}
	return []envCase{
		{name: "0–2, 0.8 apart", steps: long(2, 0.8)},
		{name: "0–3, 0.8 apart", steps: long(3, 0.8)},
		{name: "0–2, reversed", steps: []float64{1.5, -1.5}},
		{name: "0–4, disordered", steps: []float64{0.3, -2, 2.5, -0.4}},
		{name: "0–3, 20 logits apart", steps: long(3, 20)},
		{name: "0–2, 150 logits apart, reversed", steps: []float64{75, -75}},
		{name: "0–5, one step far out", steps: []float64{-0.5, 0, 0.5, 1, 60}},
		{name: "0–20, 1 logit apart", steps: long(20, 1)},
		{name: "0–40, 1 logit apart", steps: long(40, 1), loose: true},
	}
}

// TestEnvelopeBoundsInformation: for items of every shape, the information at any ability is at
// most the item's bound, and wherever it reaches a level of the ladder the ability lies within
// the envelope's reach at that level (and at the lowest level), on a grid of 1/500 logit from 12
// logits below the steps to 12 above; items past the grid's evaluations are bounded by m²/4.
func TestEnvelopeBoundsInformation(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	p, _ := f.prepared()
	for _, c := range envCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const diff = 613.0
			steps := make([]float64, len(c.steps))
			for k, o := range c.steps {
				steps[k] = diff + o*p.s
			}
			ev := newEnvelope()
			vmax := ev.add(&envItem{}, steps, diff, p.s, p.lambda)
			m := float64(len(steps))
			if loose := vmax == m*m/4*(1+envMargin); loose != c.loose {
				t.Fatalf("bounded by m²/4: got %v; want %v (vmax %v)", loose, c.loose, vmax)
			}
			lo, hi := slicesMin(c.steps)-12, slicesMax(c.steps)+12
			peak, checked := 0.0, 0
			for u := lo; u <= hi; u += 0.002 {
				_, v := scoreMoments(diff+p.s*(u-p.lambda), steps, p.s, p.lambda)
				peak = max(peak, v)
				if v > vmax {
					t.Fatalf("u %v: information %v; want at most the bound %v", u, v, vmax)
				}
				top := rung(v)
				for _, i := range []int{top, min(top, 0)} {
					if i < 0 {
						continue
					}
					checked++
					if u < -ev.above[i] || u > ev.below[i] {
						t.Fatalf("u %v: information %v ≥ level %v; want u within [%v, %v]", u, v, envLevels[i], -ev.above[i], ev.below[i])
					}
				}
			}
			if checked == 0 {
				t.Fatal("no point reached a level")
			}
			if !c.loose && vmax > peak*math.Exp(envCell/2)*1.001 {
				t.Errorf("bound %v; want at most e^%v times the peak %v", vmax, envCell/2, peak)
			}
		})
	}
}

func slicesMin(x []float64) float64 {
	out := math.Inf(1)
	for _, v := range x {
		out = min(out, v)
	}
	return out
}

func slicesMax(x []float64) float64 {
	out := math.Inf(-1)
	for _, v := range x {
		out = max(out, v)
	}
	return out
}

// TestEnvelopeReachIsTight pins how narrow the envelope is where it pays: for the benchmark's
// bank (items 0–2 and 0–3, steps 0.8 logits apart), at 0.97 of the best 0–3 item's information
// an item can lie at most 0.55 logits from the bound point, where the bound beyond the steps alone
// (infoCut plus the steps' reach) allows 1.8; a 0–2 item's bound is below that level.
func TestEnvelopeReachIsTight(t *testing.T) {
	t.Parallel()
	bk := adaptivePCMBank(t, true)
	p, _ := bk.fw.prepared()
	var peak2, peak3 float64
	for u := -3.0; u <= 3; u += 0.001 {
		for _, q := range bk.poly[:2] {
			it := bk.all[q]
			_, v := scoreMoments(it.Difficulty+p.s*(u-p.lambda), it.Steps, p.s, p.lambda)
			if len(it.Steps) == 2 {
				peak2 = max(peak2, v)
			} else {
				peak3 = max(peak3, v)
			}
		}
	}
	limit := 0.97 * peak3
	above, below, ok := bk.pidx.env.reach(limit)
	if !ok || above > 0.55 || below > 0.55 {
		t.Errorf("reach at %v: %v, %v, %v; want both at most 0.55 logits", limit, above, below, ok)
	}
	if old := bk.pidx.span/p.s + infoCut(limit); old < 1.8 {
		t.Errorf("the bound beyond the steps: %v logits; want at least 1.8 (the test's premise)", old)
	}
	for _, q := range bk.poly {
		if v := bk.pidx.vmax(q); len(bk.all[q].Steps) == 2 && v >= limit {
			t.Fatalf("item %s: bound %v (peak %v); want below %v", bk.all[q].ID, v, peak2, limit)
		}
	}
}

// TestRung: the ladder's index of a value is that of the highest level at most the value, at
// each level and just below it, and out of range −1 below and the top above.
func TestRung(t *testing.T) {
	t.Parallel()
	for _, i := range []int{0, 1, 264, 265, 400, envTopIndex - 1, envTopIndex} {
		if got := rung(envLevels[i]); got != i {
			t.Errorf("rung(level %d = %v) = %d; want %d", i, envLevels[i], got, i)
		}
		if got := rung(math.Nextafter(envLevels[i], 0)); got != i-1 {
			t.Errorf("rung(just below level %d) = %d; want %d", i, got, i-1)
		}
	}
	for _, c := range []struct {
		v    float64
		want int
	}{{0, -1}, {math.NaN(), -1}, {envFloor, -1}, {1, -envQlo}, {math.Inf(1), envTopIndex}, {1e300, envTopIndex}} {
		if got := rung(c.v); got != c.want {
			t.Errorf("rung(%v) = %d; want %d", c.v, got, c.want)
		}
	}
	if l := envLevels[0]; l < envFloor || l > envFloor*math.Exp(envRung) {
		t.Errorf("lowest level %v; want the first at or above %v", l, envFloor)
	}
}

// TestEnvelopeReachOutOfRange: below the ladder the envelope knows nothing (the walk then goes
// by infoCut), above every item's bound no item reaches, and between it is finite.
func TestEnvelopeReachOutOfRange(t *testing.T) {
	t.Parallel()
	ev := newEnvelope()
	vmax := ev.add(&envItem{}, []float64{-100, 100}, 0, 200, 1)
	for _, c := range []struct {
		name   string
		limit  float64
		ok     bool
		finite bool
	}{
		{"below the ladder", envLevels[0] * 0.99, false, false},
		{"the lowest level", envLevels[0] * (1 + 2*envMargin), true, true},
		{"half the bound", vmax / 2, true, true},
		{"above the bound", vmax * 1.05, true, false},
	} {
		above, below, ok := ev.reach(c.limit)
		if ok != c.ok || ok && (finite(above) && finite(below)) != c.finite {
			t.Errorf("%s: reach(%v) = %v, %v, %v; want ok %v, finite %v", c.name, c.limit, above, below, ok, c.ok, c.finite)
		}
		if c.name == "above the bound" && (above != math.Inf(-1) || below != math.Inf(-1)) {
			t.Errorf("%s: %v, %v; want −Inf both", c.name, above, below)
		}
	}
}
