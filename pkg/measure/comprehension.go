package measure

// ComprehensionRates is §12's expected comprehension (success) rate of a reader at ability on
// each text or item measure: the scale model P(θ, d) of §1, so a reader whose measure equals the
// text's gets SuccessAtMatch (0.75 on the demo reading scale: its comprehension target), and
// every 1 logit (UnitsPerLogit units) the reader is above the text multiplies the odds of success by e.
func (f *Framework) ComprehensionRates(ability float64, texts []float64) []float64 {
	out := make([]float64, len(texts))
	for i, d := range texts {
		out[i] = f.Probability(ability, d)
	}
	return out
}
