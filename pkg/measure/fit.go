package measure

import (
	"errors"
	"fmt"
	"math"
)

// Person-fit flags (§12): MisfitFlag when infit Z or outfit Z is above FitCut, OverfitFlag
// otherwise when either is below −FitCut, "" when neither.
const (
	MisfitFlag  = "misfit"
	OverfitFlag = "overfit"
	FitCut      = 1.96
)

// ErrExtremeScore is PersonFit's answer for a zero or perfect score: every residual then points
// the same way whatever the items, so there is no pattern to judge and no number to give.
var ErrExtremeScore = errors.New("person fit: a zero or perfect score has no fit")

// PersonFit is how well one response pattern agrees with the model at the student's ability
// (§12, Wright & Masters 1982): mean squares near 1 fit, above 1 the answers are noisier than
// the model expects (guessing, slips), below 1 more predictable (overfit); Z standardises each
// by Wilson–Hilferty.
type PersonFit struct {
	Infit, Outfit   float64
	InfitZ, OutfitZ float64
	Flag            string // MisfitFlag, OverfitFlag or ""
}

// fitSums holds the Wright & Masters sums of one person over items, or of one item over persons
// (the calibration's item fit): both are the same formulas over a different set of responses.
// With W = P(1 − P) and C = P(1 − P)⁴ + (1 − P)P⁴ for each response:
// outfit = Σ (x − P)²/W / n, infit = Σ (x − P)² / Σ W,
// q_out² = Σ C/W² / n² − 1/n, q_in² = Σ (C − W²) / (Σ W)².
type fitSums struct {
	n        float64
	std      float64 // Σ (x − P)²/W
	sq, w    float64 // Σ (x − P)², Σ W
	cw2, cmw float64 // Σ C/W², Σ (C − W²)
}

// add counts a response (right or not) where the odds against success are e = e^(d − θ) in
// logits: P = 1/(1 + e) and 1 − P = e·P, both computed directly so that neither rounds to 0
// where the other is near 1.
func (s *fitSums) add(right bool, e float64) {
	p := 1 / (1 + e)
	q := e * p
	w := p * q
	res := -p
	if right {
		res = q
	}
	c := w * (q*q*q + p*p*p) // P(1 − P)⁴ + (1 − P)P⁴
	s.n++
	s.std += res * res / w
	s.sq += res * res
	s.w += w
	s.cw2 += c / (w * w)
	s.cmw += c - w*w
}

// meanSquares returns infit and outfit.
func (s *fitSums) meanSquares() (infit, outfit float64) {
	return s.sq / s.w, s.std / s.n
}

// zs returns infit Z and outfit Z (Wilson–Hilferty: Z = (MSQ^⅓ − 1)·3/q + q/3).
func (s *fitSums) zs() (infitZ, outfitZ float64) {
	infit, outfit := s.meanSquares()
	qIn := math.Sqrt(s.cmw / (s.w * s.w))
	qOut := math.Sqrt(s.cw2/(s.n*s.n) - 1/s.n)
	return wilsonHilferty(infit, qIn), wilsonHilferty(outfit, qOut)
}

func wilsonHilferty(msq, q float64) float64 {
	return (math.Cbrt(msq)-1)*(3/q) + q/3
}

// FitFlag is §12's rule: misfit when either Z is above FitCut, otherwise overfit when either
// is below −FitCut.
func FitFlag(infitZ, outfitZ float64) string {
	switch {
	case infitZ > FitCut || outfitZ > FitCut:
		return MisfitFlag
	case infitZ < -FitCut || outfitZ < -FitCut:
		return OverfitFlag
	}
	return ""
}

// PersonFit judges the answers' pattern at ability (measure units; the unrounded estimate the
// answer reports: the MLE of Standard or the EAP of Bayes). A polytomous answer (METHOD §13)
// counts with W = V and C = Σ (x − E)⁴·P(X = x) of its item, a dichotomous one with §12's
// P(1 − P) and P(1 − P)⁴ + (1 − P)P⁴ (the same numbers for one step). A zero or perfect score (no
// points, or every item's maximum) returns ErrExtremeScore; no answers, a non-finite ability,
// difficulty or step, or points outside 0 … the item's maximum return an error.
func (f *Framework) PersonFit(ability float64, answers []Answer) (PersonFit, error) {
	p, err := f.prepared()
	if err != nil {
		return PersonFit{}, err
	}
	if len(answers) == 0 {
		return PersonFit{}, errors.New("person fit: no answers")
	}
	if !finite(ability) {
		return PersonFit{}, fmt.Errorf("person fit: ability %v is not finite", ability)
	}
	points, most := 0, 0
	for i, a := range answers {
		if !finite(a.Item.Difficulty) {
			return PersonFit{}, fmt.Errorf("person fit: answer %d: difficulty %v is not finite", i, a.Item.Difficulty)
		}
		for k, d := range a.Item.Steps {
			if !finite(d) {
				return PersonFit{}, fmt.Errorf("person fit: answer %d: step %d: %v is not finite", i, k+1, d)
			}
		}
		x, m := a.Points(), a.Item.MaxScore()
		if x < 0 || x > m {
			return PersonFit{}, fmt.Errorf("person fit: answer %d: score %d is outside 0 … %d", i, x, m)
		}
		points += x
		most += m
	}
	if points == 0 || points == most {
		return PersonFit{}, ErrExtremeScore
	}
	var s fitSums
	for _, a := range answers {
		if !a.Item.Polytomous() {
			d := a.Item.Difficulty
			if len(a.Item.Steps) == 1 { // one step is the dichotomous item of that difficulty
				d = a.Item.Steps[0]
			}
			s.add(a.Points() == 1, math.Exp((d-ability)*p.invS-p.lambda))
			continue
		}
		e, v, c := p.itemMoments(ability, a.Item.Steps)
		s.addScore(float64(a.Points()), e, v, c)
	}
	var pf PersonFit
	pf.Infit, pf.Outfit = s.meanSquares()
	pf.InfitZ, pf.OutfitZ = s.zs()
	pf.Flag = FitFlag(pf.InfitZ, pf.OutfitZ)
	return pf, nil
}

// addScore counts a polytomous response of x points whose item has expected score e, variance
// w and fourth central moment c at the ability (eRm's Emat, Vmat and Cmat).
func (s *fitSums) addScore(x, e, w, c float64) {
	res := x - e
	s.n++
	s.std += res * res / w
	s.sq += res * res
	s.w += w
	s.cw2 += c / (w * w)
	s.cmw += c - w*w
}
