package measure

import "math"

// Difficulty is a block of Count items of one difficulty (measure units). Count >= 1.
//
// With two or more Steps the items are polytomous (partial credit, METHOD §13): each is scored
// 0 … len(Steps) and Steps are its step difficulties (measure units, in any order: disordered
// steps are legal); Measure is then not used. One step is the dichotomous item of difficulty
// Steps[0] (Measure is then not used either), so a caller may pass every item as steps.
type Difficulty struct {
	Measure float64
	Count   int
	Steps   []float64
}

// MaxScore is the highest score of one of the block's items: len(Steps), or 1 without steps.
func (d Difficulty) MaxScore() int {
	if len(d.Steps) > 0 {
		return len(d.Steps)
	}
	return 1
}

// Test is what the estimators need from a scored test: the items' difficulties and the raw
// score r = Correct, the total of score points (the number correct when every item is
// dichotomous). Under the Rasch model and the partial credit model r is sufficient, so a response
// pattern and its raw score give the same estimate (see the package documentation).
type Test struct {
	Items   []Difficulty
	Correct int
}

// MaxScore is the test's highest raw score: Σ Count·MaxScore over its items (n when every item
// is dichotomous). It saturates at math.MaxInt rather than overflow.
func (t Test) MaxScore() int {
	total := 0
	for _, d := range t.Items {
		if d.Count <= 0 {
			continue
		}
		m := d.MaxScore()
		if d.Count > (math.MaxInt-total)/m {
			return math.MaxInt
		}
		total += d.Count * m
	}
	return total
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

// Answer is one scored response to a bank item: Score points out of Item.MaxScore(). Correct is
// the dichotomous form of the same answer (Correct with Score 0 counts as 1 point), so a caller
// may set either; see Points. The estimators see only the total of points (TestOf), so a caller
// checks each answer's points against its item's maximum (PersonFit and Bank.Next check too).
type Answer struct {
	Item    Item
	Correct bool
	Score   int
}

// Points is the answer's score: Score when it is not 0, else 1 if Correct, else 0.
func (a Answer) Points() int { return points(a.Score, a.Correct) }

func points(score int, correct bool) int {
	if score == 0 && correct {
		return 1
	}
	return score
}

// TestOf turns scored answers into a Test (one Difficulty per answer, with the item's steps when
// it has any — one step is the dichotomous item of that difficulty; Correct = the total of the
// answers' points).
func TestOf(answers []Answer) Test {
	t := Test{Items: make([]Difficulty, len(answers))}
	for i, a := range answers {
		t.Items[i] = Difficulty{Measure: a.Item.Difficulty, Count: 1, Steps: a.Item.Steps}
		t.Correct += a.Points()
	}
	return t
}
