package measure

import "math"

// Difficulty is a block of Count items of one difficulty (measure units). Count >= 1.
type Difficulty struct {
	Measure float64
	Count   int
}

// Test is what the estimators need from a scored test: the items' difficulties and the raw
// score r = Correct. Under the Rasch model r is sufficient, so a response pattern and its number
// correct give the same estimate (see the package documentation).
type Test struct {
	Items   []Difficulty
	Correct int
}

// Normal is a normal distribution in measure units.
type Normal struct{ Mean, SD float64 }

// Estimate is an ability and its uncertainty (standard error or posterior SD), in measure units.
type Estimate struct{ Ability, Uncertainty float64 }

// Update is §3's exact normal–normal update of prior by an observation obs (a scale score's
// measure and its uncertainty). A zero SD is a certainty and wins; two certainties average.
func Update(prior, obs Normal) Normal {
	switch {
	case obs.SD == 0 && prior.SD == 0:
		return Normal{Mean: (prior.Mean + obs.Mean) / 2}
	case obs.SD == 0 || math.IsInf(prior.SD, 1):
		return obs
	case prior.SD == 0 || math.IsInf(obs.SD, 1):
		return prior
	}
	wp := 1 / (prior.SD * prior.SD)
	wo := 1 / (obs.SD * obs.SD)
	return Normal{
		Mean: (prior.Mean*wp + obs.Mean*wo) / (wp + wo),
		SD:   math.Sqrt(1 / (wp + wo)),
	}
}

// Answer is one scored response to a bank item.
type Answer struct {
	Item    Item
	Correct bool
}

// TestOf turns scored answers into a Test (one Difficulty per answer, Correct = number right).
func TestOf(answers []Answer) Test {
	t := Test{Items: make([]Difficulty, len(answers))}
	for i, a := range answers {
		t.Items[i] = Difficulty{Measure: a.Item.Difficulty, Count: 1}
		if a.Correct {
			t.Correct++
		}
	}
	return t
}
