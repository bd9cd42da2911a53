package measure

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// Stop reasons of an adaptive session (§11), as the wire names them; "" means go on.
const (
	StopMaxItems          = "maxItems"
	StopPoolExhausted     = "poolExhausted"
	StopTargetUncertainty = "targetUncertainty"
	StopClassified        = "classified"
)

// Defaults of the stop rules (§11).
const (
	DefaultMaxItems   = 30
	DefaultMinItems   = 5 // or maxItems when that is smaller
	DefaultConfidence = 0.95
)

// AdaptiveRequest is one step of a stateless adaptive session (§11): everything answered so far
// and the session's settings, in the wire's terms (nil = absent). The answer depends on nothing
// else, so any replica can answer any step.
type AdaptiveRequest struct {
	Items []Response // answered so far, in order; may be empty

	// The prior: PriorAbility and PriorUncertainty together (grown over ElapsedDays, default 0),
	// else the norm curve at Grade and TimeOfYear (MOY when absent) with SD = PopulationSD, else
	// the median difficulty of Pool (or of the bank) with SD = PopulationSD.
	PriorAbility, PriorUncertainty, ElapsedDays *float64
	Grade                                       *int
	TimeOfYear                                  *string

	Pool    []string           // candidates only from these ids (all of the bank when empty)
	Exclude []string           // never these ids
	Strands map[string]float64 // content balancing: strand → target share > 0 (off when empty)

	Randomesque   *int     // choose among the k best (k ≥ 1; 1 when absent)
	Seed          *int64   // makes the randomesque choice a function of the seed and the request
	TargetSuccess *float64 // select the item with P(θ) nearest this (0 < p < 1) instead of maximum information

	Stop StopRules
}

// Response is an answered item: its id and its score, Score points out of the item's MaxScore.
// Correct is the dichotomous form of the same answer (Correct with Score 0 counts as 1 point),
// so a caller may set either; see Points.
type Response struct {
	ID      string
	Correct bool
	Score   int
}

// Points is the response's score: Score when it is not 0, else 1 if Correct, else 0.
func (r Response) Points() int { return points(r.Score, r.Correct) }

// StopRules are the session's stop rules (§11); nil fields take their defaults, and the rules
// without a default are off.
type StopRules struct {
	MaxItems, MinItems                 *int
	TargetUncertainty, Cut, Confidence *float64
}

// Step is the answer to one AdaptiveRequest.
type Step struct {
	Next       *Item    // the item to give next; nil when the session stops
	StopReason string   // "" or one of the Stop constants
	Estimate   Estimate // unrounded EAP and posterior SD after the items answered
	Prior      Normal   // the session's prior
	Answered   int      // the number of items answered
}

// RequestError lists every problem of an AdaptiveRequest, each under the wire path of its field.
type RequestError struct{ Problems []Problem }

// Problem is one problem of a request: the field's path (`items[3].id`, `stop.minItems`) and
// what is wrong.
type Problem struct{ Field, Message string }

func (e *RequestError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "adaptive request: " + strings.Join(parts, "; ")
}

// session is a checked request: its items resolved in the bank and its settings with their
// defaults filled in.
type session struct {
	answered  []int32 // positions in the bank of the items answered, in order
	test      Test    // their difficulties and raw score
	used      []int32 // positions answered or excluded, ascending
	pool      []int32 // positions of the pool's items, ascending (nil: the whole bank)
	poolPoly  []int32 // the polytomous ones among them
	poolDich  []int32 // and the dichotomous ones (pool itself when the bank has no polytomous item)
	items     []Response
	prior     Normal
	shares    map[string]float64 // normalised target shares (nil: no balancing)
	k         int
	seed      *int64
	target    float64
	maxItems  int
	minItems  int
	targetSD  *float64
	cut       *float64
	z         float64
	framework string
}

// Check reports through problem everything wrong with req against the bank — each problem under
// its field's wire path, with the offending id, strand or value in the message — and whether req
// can be answered. Next runs the same checks.
func (bk *Bank) Check(req *AdaptiveRequest, problem func(field, format string, args ...any)) bool {
	_, ok := bk.resolve(req, problem)
	return ok
}

// Next answers one step of an adaptive session (§11): the EAP and posterior SD of the answers
// under the session's prior, then the stop rules in order (maxItems, poolExhausted, and after
// minItems targetUncertainty and classified), and unless one holds the next item: among the
// candidates (the bank's items not answered, not excluded, in pool when given, of the strand
// content balancing picks) the most informative at the unrounded EAP, or the one whose P(θ) is
// nearest TargetSuccess, ties by the lower id; with randomesque k, one of the k best, uniformly.
// An invalid request is a *RequestError listing every problem.
func (bk *Bank) Next(req *AdaptiveRequest) (Step, error) {
	var re RequestError
	s, ok := bk.resolve(req, func(field, format string, args ...any) {
		re.Problems = append(re.Problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	})
	if !ok {
		return Step{}, &re
	}
	step := Step{Prior: s.prior, Answered: len(s.answered), Estimate: Estimate{Ability: s.prior.Mean, Uncertainty: s.prior.SD}}
	if len(s.answered) > 0 {
		est, err := bk.fw.Bayes(s.test, s.prior)
		if err != nil {
			return Step{}, fmt.Errorf("adaptive estimate: %w", err)
		}
		step.Estimate = est
	}
	if step.Answered >= s.maxItems {
		step.StopReason = StopMaxItems
		return step, nil
	}
	next, ok := bk.choose(s, step.Estimate.Ability)
	if !ok {
		step.StopReason = StopPoolExhausted
		return step, nil
	}
	if step.Answered >= s.minItems {
		sd := step.Estimate.Uncertainty
		switch {
		case s.targetSD != nil && sd <= *s.targetSD:
			step.StopReason = StopTargetUncertainty
			return step, nil
		case s.cut != nil && math.Abs(step.Estimate.Ability-*s.cut) > s.z*sd:
			step.StopReason = StopClassified
			return step, nil
		}
	}
	step.Next = &next
	return step, nil
}

// choose picks the next item at ability theta, or reports that no candidate is left.
func (bk *Bank) choose(s *session, theta float64) (Item, bool) {
	p := bk.fw.prep
	if p == nil {
		p, _ = bk.fw.prepared() // NewBank checked that it builds
	}
	sel := &selector{theta: theta, s: p.s, lambda: p.lambda, target: s.target}
	var buf [8]candidate
	var best []candidate
	for _, strand := range bk.strandOrder(s) {
		list, poly := bk.candidates(s, strand)
		best = sel.best(bk.all, bk.pidx, list, poly, s.used, s.k, buf[:0])
		if len(best) > 0 {
			break
		}
	}
	if len(best) == 0 {
		return Item{}, false
	}
	return bk.all[best[s.pick(bk, best)].pos], true
}

// candidates is what the selection walks: the dichotomous and the polytomous items among the
// pool's or the bank's positions, of one strand when strand is not "" (content balancing).
func (bk *Bank) candidates(s *session, strand string) (list, poly []int32) {
	switch {
	case s.pool != nil && strand == "":
		return s.poolDich, s.poolPoly
	case s.pool != nil:
		var of, ofPoly []int32
		for _, p := range s.pool {
			if bk.all[p].Strand == strand {
				if bk.all[p].Polytomous() {
					ofPoly = append(ofPoly, p)
				} else {
					of = append(of, p)
				}
			}
		}
		return of, ofPoly
	case strand == "":
		return bk.dich, bk.poly
	}
	return bk.dichStrands[strand], bk.polyStrands[strand]
}

// strandOrder is the order in which content balancing tries strands (§11): by how far the
// strand's target share exceeds its share of the answered items of the named strands, then the
// larger target, then the name in byte order. Without balancing it is the single "" (any strand).
func (bk *Bank) strandOrder(s *session) []string {
	if s.shares == nil {
		return []string{""}
	}
	counts := map[string]int{}
	total := 0
	for _, p := range s.answered {
		if strand := bk.all[p].Strand; s.shares[strand] > 0 {
			counts[strand]++
			total++
		}
	}
	type gap struct {
		name          string
		target, short float64
	}
	gaps := make([]gap, 0, len(s.shares))
	for name, target := range s.shares {
		share := 0.0
		if total > 0 {
			share = float64(counts[name]) / float64(total)
		}
		gaps = append(gaps, gap{name, target, target - share})
	}
	slices.SortFunc(gaps, func(a, b gap) int {
		switch {
		case a.short != b.short:
			return -cmpFloat(a.short, b.short)
		case a.target != b.target:
			return -cmpFloat(a.target, b.target)
		}
		return strings.Compare(a.name, b.name)
	})
	order := make([]string, len(gaps))
	for i, g := range gaps {
		order[i] = g.name
	}
	return order
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pick chooses uniformly among the best candidates (randomesque, Kingsbury & Zara 1989). With a
// seed the choice is a hash of the seed and the request's state — the framework, the answers in
// order and the candidates — so the same request always gets the same item and the next step of
// the same session an independent choice; without one it is random.
func (s *session) pick(bk *Bank, best []candidate) int {
	n := len(best)
	if n == 1 {
		return 0
	}
	if s.seed == nil {
		return rand.IntN(n)
	}
	h := newHash(uint64(*s.seed))
	h.str(s.framework)
	for _, r := range s.items {
		h.str(r.ID)
		// The points as a varint: one byte, 0 or 1, for a dichotomous answer, as it always was.
		x := uint(r.Points())
		for ; x >= 0x80; x >>= 7 {
			h.byte(byte(x) | 0x80)
		}
		h.byte(byte(x))
	}
	for _, c := range best {
		h.str(bk.all[c.pos].ID)
	}
	return int(h.index(uint64(n)))
}

// fnvHash is 64-bit FNV-1a, finished with SplitMix64's mixer so that every input bit moves the
// high bits the index is taken from. It is written out here because the choice must stay the
// same across Go releases (the documented examples depend on it).
type fnvHash uint64

func newHash(seed uint64) *fnvHash {
	h := fnvHash(14695981039346656037)
	for i := 0; i < 8; i++ {
		h.byte(byte(seed >> (8 * i)))
	}
	return &h
}

func (h *fnvHash) byte(b byte) { *h = (*h ^ fnvHash(b)) * 1099511628211 }

func (h *fnvHash) str(s string) {
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
	h.byte(0) // separator: "ab","c" and "a","bc" differ
}

// index maps the hash to [0, n) by the high half of a 128-bit product (Lemire).
func (h *fnvHash) index(n uint64) uint64 {
	z := uint64(*h) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	hi, _ := bits.Mul64(z, n)
	return hi
}
