package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Simulation describes a seeded simulation of adaptive sessions (§11): Students simulated
// students with true abilities drawn from Population answer, item after item, with the model's
// probability (§1; a polytomous item's score is drawn from its partial credit categories), until
// the stop rules end their session. Every session takes its settings
// (pool, exclude, strands, randomesque, targetSuccess, stop rules, prior) from Settings; its
// items are filled in as the session goes, and with randomesque each student gets its own seed
// (a function of Seed and the student's number), so a run is reproducible.
type Simulation struct {
	Students   int
	Seed       uint64
	Population Normal
	Settings   AdaptiveRequest
	// Random replaces the selection rule by a uniformly random choice among the candidates (the
	// bank's items not answered, not excluded and in the pool when given): the reference the
	// selection rule is measured against. The stop rules still decide when a session ends.
	Random bool
}

// SimulationReport sums a simulation up. Lengths count the items answered when the session
// stopped; errors compare the final ability with the true one.
type SimulationReport struct {
	Students    int
	MeanLength  float64
	RMSE, Bias  float64        // of the final ability against the true ability
	MeanSD      float64        // mean reported uncertainty (posterior SD)
	Coverage    float64        // share of the true abilities inside ability ± z·SD, z for 95%
	MaxExposure float64        // largest share of students who were given one item
	Exposure    map[string]int // students given each item (items given to nobody are absent)
	StopReasons map[string]int // sessions ended by each reason
}

// NextFunc answers one step of a session: the bank's Next, or the same request sent to a service.
type NextFunc func(ctx context.Context, req *AdaptiveRequest) (Step, error)

// Simulate runs sim with next answering each step (bk.Next when next is nil). A step that names
// no item and gives no stop reason, or an item already answered, is an error: the simulation
// would never end.
func (bk *Bank) Simulate(ctx context.Context, sim Simulation, next NextFunc) (SimulationReport, error) {
	if sim.Students < 1 {
		return SimulationReport{}, errors.New("simulate: at least one student is needed")
	}
	if !finite(sim.Population.Mean) || !finite(sim.Population.SD) || sim.Population.SD < 0 {
		return SimulationReport{}, fmt.Errorf("simulate: population N(%v, %v²) is not a finite mean with an SD >= 0", sim.Population.Mean, sim.Population.SD)
	}
	if next == nil {
		next = func(_ context.Context, req *AdaptiveRequest) (Step, error) { return bk.Next(req) }
	}
	rng := rand.New(rand.NewPCG(sim.Seed, 0x5ad0_0011))
	rep := SimulationReport{Students: sim.Students, Exposure: map[string]int{}, StopReasons: map[string]int{}}
	z95 := math.Sqrt2 * math.Erfinv(0.95)
	var randomFrom []Item // nil: the selection rule chooses
	if sim.Random {
		randomFrom = bk.randomFrom(&sim.Settings)
	}
	var sumLen, sumSq, sumErr, sumSD float64
	covered := 0
	for i := 0; i < sim.Students; i++ {
		if err := ctx.Err(); err != nil {
			return SimulationReport{}, fmt.Errorf("simulate: %w", err)
		}
		theta := sim.Population.Mean + sim.Population.SD*rng.NormFloat64()
		req := sim.Settings
		req.Items = nil
		if req.Randomesque != nil && *req.Randomesque > 1 {
			// A mix of the simulation's seed and the student's number, within 32 bits (the
			// service's seed field is an int32).
			x := sim.Seed + uint64(i+1)*0x9e3779b97f4a7c15
			x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
			x = (x ^ x>>27) * 0x94d049bb133111eb
			seed := int64(int32(x >> 32))
			req.Seed = &seed
		}
		step, err := bk.session(ctx, &req, theta, rng, randomFrom, next, rep.Exposure)
		if err != nil {
			return SimulationReport{}, fmt.Errorf("simulate: student %d: %w", i+1, err)
		}
		rep.StopReasons[step.StopReason]++
		e := step.Estimate.Ability - theta
		sumLen += float64(step.Answered)
		sumSq += e * e
		sumErr += e
		sumSD += step.Estimate.Uncertainty
		if math.Abs(e) <= z95*step.Estimate.Uncertainty {
			covered++
		}
	}
	n := float64(sim.Students)
	rep.MeanLength = sumLen / n
	rep.RMSE = math.Sqrt(sumSq / n)
	rep.Bias = sumErr / n
	rep.MeanSD = sumSD / n
	rep.Coverage = float64(covered) / n
	for _, c := range rep.Exposure {
		rep.MaxExposure = math.Max(rep.MaxExposure, float64(c)/n)
	}
	return rep, nil
}

// session runs one student at true ability theta to the end and returns the last step.
func (bk *Bank) session(ctx context.Context, req *AdaptiveRequest, theta float64, rng *rand.Rand, random []Item, next NextFunc, exposure map[string]int) (Step, error) {
	answered := map[string]bool{}
	for {
		step, err := next(ctx, req)
		if err != nil {
			return Step{}, err
		}
		if step.StopReason != "" {
			return step, nil
		}
		if step.Next == nil {
			return Step{}, errors.New("a step named neither an item nor a stop reason")
		}
		item := *step.Next
		if random != nil {
			var ok bool
			if item, ok = randomCandidate(random, answered, rng); !ok {
				return Step{}, errors.New("no candidate left for random selection, but the rules chose one")
			}
		}
		if answered[item.ID] {
			return Step{}, fmt.Errorf("item %s was given twice", item.ID)
		}
		answered[item.ID] = true
		exposure[item.ID]++
		if item.Polytomous() {
			req.Items = append(req.Items, Response{ID: item.ID, Score: bk.drawScore(theta, item.Steps, rng.Float64())})
			continue
		}
		correct := rng.Float64() < bk.fw.Probability(theta, item.Difficulty)
		req.Items = append(req.Items, Response{ID: item.ID, Correct: correct})
	}
}

// drawScore is the score 0 … m that a student at theta gets on an item with these steps when
// the uniform draw is u: the first category whose cumulative probability exceeds u.
func (bk *Bank) drawScore(theta float64, steps []float64, u float64) int {
	var buf [16]float64
	p, _ := bk.fw.prepared() // NewBank checked that it builds
	cats := p.categories(theta, steps, buf[:0])
	acc := 0.0
	for x, q := range cats[:len(cats)-1] {
		if acc += q; u < acc {
			return x
		}
	}
	return len(cats) - 1
}

// randomFrom is the list random selection draws from: the bank's items, or the pool's, less
// the excluded ones.
func (bk *Bank) randomFrom(req *AdaptiveRequest) []Item {
	excluded := map[string]bool{}
	for _, id := range req.Exclude {
		excluded[id] = true
	}
	from := bk.all
	if len(req.Pool) > 0 {
		from = nil
		for _, id := range req.Pool {
			if p, ok := bk.pos[id]; ok {
				from = append(from, bk.all[p])
			}
		}
	}
	var left []Item
	seen := map[string]bool{}
	for _, it := range from {
		if !excluded[it.ID] && !seen[it.ID] {
			seen[it.ID] = true
			left = append(left, it)
		}
	}
	return left
}

// randomCandidate draws uniformly among from's items not answered yet: by rejection while most
// are left, by a scan when few are.
func randomCandidate(from []Item, answered map[string]bool, rng *rand.Rand) (Item, bool) {
	if 2*len(answered) < len(from) {
		for {
			if it := from[rng.IntN(len(from))]; !answered[it.ID] {
				return it, true
			}
		}
	}
	var left []Item
	for _, it := range from {
		if !answered[it.ID] {
			left = append(left, it)
		}
	}
	if len(left) == 0 {
		return Item{}, false
	}
	return left[rng.IntN(len(left))], true
}
