package measure

import (
	"errors"
	"fmt"
	"math"
)

// Scaled is a calibration put on a framework's scale (§10):
// difficulty = s·(logit + ln(m/(1 − m))) + Shift, in measure units.
type Scaled struct {
	Shift      float64
	Difficulty []float64 // parallel to Calibration.Items (a polytomous item's location)
	// Steps are the step difficulties of each polytomous item, on the same scale (§13:
	// d_ik = s·(δ_ik + λ) + Shift, their mean the item's Difficulty); nil for an item scored 0/1.
	Steps   [][]float64
	Anchors []Anchor // with mean-mean linking, in Calibration.Items order
}

// Anchor is a bank item calibrated again from the data: Displacement = Calibrated − Bank, in
// measure units (the mean displacement is 0 by construction of mean-mean linking).
type Anchor struct {
	ID           string  `json:"id"`
	Bank         float64 `json:"bank"`
	Calibrated   float64 `json:"calibrated"`
	Displacement float64 `json:"displacement"`
}

// OnScaleMean puts the calibration on f's scale with the shift that makes the mean difficulty of
// the calibrated items equal mean. The logits sum to zero, so difficulty = s·logit + mean.
func (c *Calibration) OnScaleMean(f *Framework, mean float64) (*Scaled, error) {
	p, err := f.prepared()
	if err != nil {
		return nil, err
	}
	if !finite(mean) {
		return nil, fmt.Errorf("target mean %v is not a number", mean)
	}
	return c.scaled(p, mean-p.s*(c.meanLogit()+p.lambda)), nil
}

// OnScaleAnchors links the calibration to a bank by mean-mean linking: bank maps the ids of
// anchor items to their bank difficulties (measure units; a polytomous item's location, the mean
// of its steps); the calibrated items among them fix the shift so that their calibrated mean
// equals their bank mean. Ids in bank that were not
// calibrated are ignored; at least one must be.
func (c *Calibration) OnScaleAnchors(f *Framework, bank map[string]float64) (*Scaled, error) {
	p, err := f.prepared()
	if err != nil {
		return nil, err
	}
	sumBank, sumCal, n := 0.0, 0.0, 0
	for _, it := range c.Items {
		if b, ok := bank[it.ID]; ok {
			if !finite(b) {
				return nil, fmt.Errorf("anchor %s: bank difficulty %v is not a number", it.ID, b)
			}
			sumBank += b
			sumCal += p.s * (it.Logit + p.lambda)
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("no calibrated item is an anchor (none of them is in the bank)")
	}
	sc := c.scaled(p, (sumBank-sumCal)/float64(n))
	for k, it := range c.Items {
		if b, ok := bank[it.ID]; ok {
			d := sc.Difficulty[k]
			sc.Anchors = append(sc.Anchors, Anchor{ID: it.ID, Bank: b, Calibrated: d, Displacement: d - b})
		}
	}
	return sc, nil
}

func (c *Calibration) meanLogit() float64 {
	sum := 0.0
	for _, it := range c.Items {
		sum += it.Logit
	}
	return sum / math.Max(float64(len(c.Items)), 1)
}

func (c *Calibration) scaled(p *prepared, shift float64) *Scaled {
	sc := &Scaled{Shift: shift, Difficulty: make([]float64, len(c.Items))}
	for k, it := range c.Items {
		sc.Difficulty[k] = p.s*(it.Logit+p.lambda) + shift
		if it.Steps == nil {
			continue
		}
		if sc.Steps == nil {
			sc.Steps = make([][]float64, len(c.Items))
		}
		sc.Steps[k] = make([]float64, len(it.Steps))
		for h, st := range it.Steps {
			sc.Steps[k][h] = p.s*(st.Logit+p.lambda) + shift
		}
	}
	return sc
}
