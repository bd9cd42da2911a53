package measure

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Bank is one framework's items indexed by difficulty for adaptive testing (§11). The best item
// under either selection rule lies next to one difficulty — the one where information peaks, or
// where P(θ) equals the target — and the rule's key worsens steadily away from it on both sides,
// so a binary search finds that point and a walk outwards from it meets the candidates in order
// of merit: a selection reads a handful of items, never the whole bank.
//
// A Bank is immutable and safe for concurrent use.
//
// Items are referred to by their position in all (int32): a request's answered and excluded items
// become a sorted list of positions, so that checking and skipping them costs no map and no
// pointer the garbage collector must follow; positions in ascending order are items in order of
// difficulty, so a pool sorted by position is sorted for the walk.
type Bank struct {
	fw      *Framework
	all     []Item             // the framework's items by difficulty, then id
	order   []int32            // 0, 1, …, len(all) − 1: the walk's list for the whole bank
	pos     map[string]int32   // id → position in all
	strands map[string][]int32 // each strand's positions, ascending
	// The polytomous items (METHOD §13), also in order and strands, and the dichotomous ones
	// apart: a polytomous item's information has no single peak in difficulty, so the selection
	// walks them on their own with bounds of its own (scanPoly). poly and polyStrands are nil and
	// empty, dich and dichStrands order and strands, when every item is dichotomous.
	poly        []int32
	polyStrands map[string][]int32
	dich        []int32
	dichStrands map[string][]int32
	pidx        *polyIndex
	median      float64 // median difficulty of all (the prior of last resort)
	// lookup finds any id the content knows, of every framework, so that an id of the other
	// framework is told apart from an unknown one.
	lookup func(id string) (Item, bool)
}

// NewBank indexes items, which must all be of fw's framework, have distinct ids and finite
// difficulties and steps. At least one item is needed. fw must be prepared (Prepare) or valid.
func NewBank(fw *Framework, items []Item) (*Bank, error) {
	if _, err := fw.prepared(); err != nil {
		return nil, fmt.Errorf("bank: %w", err)
	}
	if len(items) == 0 {
		return nil, errors.New("bank: no items")
	}
	byID := make(map[string]Item, len(items))
	for _, it := range items {
		switch {
		case it.Framework != fw.Name:
			return nil, fmt.Errorf("bank: item %q is a %s item, not %s", it.ID, it.Framework, fw.Name)
		case it.ID == "":
			return nil, errors.New("bank: an item has no id")
		case !finite(it.Difficulty):
			return nil, fmt.Errorf("bank: item %q: difficulty %v is not finite", it.ID, it.Difficulty)
		}
		for k, d := range it.Steps {
			if !finite(d) {
				return nil, fmt.Errorf("bank: item %q: step %d: %v is not finite", it.ID, k+1, d)
			}
		}
		if len(it.Steps) == 1 && it.Steps[0] != it.Difficulty {
			return nil, fmt.Errorf("bank: item %q: its single step %v is not its difficulty %v", it.ID, it.Steps[0], it.Difficulty)
		}
		if _, dup := byID[it.ID]; dup {
			return nil, fmt.Errorf("bank: item id %q appears twice", it.ID)
		}
		byID[it.ID] = it
	}
	return newBank(fw, items, func(id string) (Item, bool) {
		it, ok := byID[id]
		return it, ok
	}), nil
}

// newBank builds the index of valid items (the loader's or NewBank's).
func newBank(fw *Framework, items []Item, lookup func(string) (Item, bool)) *Bank {
	all := slices.Clone(items)
	slices.SortFunc(all, byDifficulty)
	bk := &Bank{fw: fw, all: all, order: make([]int32, len(all)), pos: make(map[string]int32, len(all)),
		strands: map[string][]int32{}, polyStrands: map[string][]int32{}, lookup: lookup}
	for i, it := range all {
		bk.order[i] = int32(i)
		bk.pos[it.ID] = int32(i)
		bk.strands[it.Strand] = append(bk.strands[it.Strand], int32(i))
		if it.Polytomous() {
			bk.poly = append(bk.poly, int32(i))
			bk.polyStrands[it.Strand] = append(bk.polyStrands[it.Strand], int32(i))
		}
	}
	bk.median = medianDifficulty(all)
	bk.dich, bk.dichStrands = bk.order, bk.strands
	if len(bk.poly) > 0 {
		bk.dich, bk.dichStrands = nil, map[string][]int32{}
		for i, it := range all {
			if !it.Polytomous() {
				bk.dich = append(bk.dich, int32(i))
				bk.dichStrands[it.Strand] = append(bk.dichStrands[it.Strand], int32(i))
			}
		}
		p, _ := fw.prepared() // valid: NewBank and the loader checked it
		bk.pidx = newPolyIndex(all, bk.poly, bk.median, p.s, p.lambda)
	}
	return bk
}

// byDifficulty orders items by difficulty, then id in byte order.
func byDifficulty(a, b Item) int {
	if c := cmp.Compare(a.Difficulty, b.Difficulty); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// medianDifficulty is the median of items sorted by difficulty; with an even count, the mean of
// the two middle ones.
func medianDifficulty(sorted []Item) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2].Difficulty
	}
	return (sorted[n/2-1].Difficulty + sorted[n/2].Difficulty) / 2
}

// medianOf is the median difficulty of the items at ascending positions.
func (bk *Bank) medianOf(positions []int32) float64 {
	n := len(positions)
	if n%2 == 1 {
		return bk.all[positions[n/2]].Difficulty
	}
	return (bk.all[positions[n/2-1]].Difficulty + bk.all[positions[n/2]].Difficulty) / 2
}

// Framework is the bank's framework. Treat it as read-only.
func (bk *Bank) Framework() *Framework { return bk.fw }

// Len is the number of items in the bank.
func (bk *Bank) Len() int { return len(bk.all) }

// Item returns the bank's item with this id.
func (bk *Bank) Item(id string) (Item, bool) {
	p, ok := bk.pos[id]
	if !ok {
		return Item{}, false
	}
	return bk.all[p], true
}

// Median is the median difficulty of the bank's items.
func (bk *Bank) Median() float64 { return bk.median }

// Bank returns the adaptive-testing index of a framework's items; false when the framework is
// unknown or has no items.
func (b *Bundle) Bank(framework string) (*Bank, bool) {
	bk, ok := b.banks[framework]
	return bk, ok
}

// indexBanks builds every framework's Bank once the bundle is loaded and valid.
func (b *Bundle) indexBanks() {
	per := map[string][]Item{}
	for _, it := range b.items {
		per[it.Framework] = append(per[it.Framework], it)
	}
	b.banks = map[string]*Bank{}
	for name, items := range per {
		b.banks[name] = newBank(b.frameworks[name], items, b.Item)
	}
}

// selector is a selection rule at one ability (§11): maximum information, or the success rate
// nearest a target. key is what the rule ranks items by, computed the plain way (the tests check
// the choice against an independent scan that computes it likewise).
type selector struct {
	theta, s, lambda float64
	target           float64 // the target success rate; 0 for maximum information
}

// prob is §1's P(θ, d).
func (sel *selector) prob(d float64) float64 {
	return 1 / (1 + math.Exp(-((sel.theta-d)/sel.s + sel.lambda)))
}

// polyKey is key for a polytomous item: its information V (times s², as key's P(1 − P)) under
// maximum information, or |E/m − target| under a target (METHOD §13).
func (sel *selector) polyKey(steps []float64) float64 {
	e, v := scoreMoments(sel.theta, steps, sel.s, sel.lambda)
	if sel.target == 0 {
		return v
	}
	return math.Abs(e/float64(len(steps)) - sel.target)
}

// key is the item's information P(1 − P) (times s², a constant) under maximum information, or
// |P − target| under a target.
func (sel *selector) key(d float64) float64 {
	p := sel.prob(d)
	if sel.target == 0 {
		return p * (1 - p)
	}
	return math.Abs(p - sel.target)
}

// better is the rule's order on keys: more information, or nearer the target.
func (sel *selector) better(a, b float64) bool {
	if sel.target == 0 {
		return a > b
	}
	return a < b
}

// clearlyWorse reports whether key a is worse than b by more than rounding: the keys of items on
// one side of the peak worsen steadily in exact arithmetic, but a last-bit wobble must not end a
// walk before an item tied with the last one taken.
func (sel *selector) clearlyWorse(a, b float64) bool {
	const slack = 1e-12
	if sel.target == 0 {
		return a < b*(1-slack)
	}
	return a > b*(1+slack)+1e-18
}

// peak is the difficulty where the key is best: P = 0.5 at d = θ + λ·s, or P = target at
// d = θ + s·(λ − logit(target)).
func (sel *selector) peak() float64 {
	if sel.target == 0 {
		return sel.theta + sel.lambda*sel.s
	}
	return sel.theta + sel.s*(sel.lambda-math.Log(sel.target/(1-sel.target)))
}

// candidate is an item (its position in the bank) with its key.
type candidate struct {
	pos int32
	key float64
}

// best appends to out the k best items of list (dichotomous items, ascending positions in all, so
// in order of difficulty) and poly (polytomous ones, likewise) that are not in used (ascending
// positions), best first, ties by the lower id; fewer when fewer are left. It walks outwards from
// the peak over list: the next item taken is the better of the two ends of the walk, and the walk
// ends once k are taken and both ends are clearly worse than the last one taken, so items tied
// with it are still compared by id. Then poly's walk (scanPoly, with the bank's index pi), and
// the k best of both kept.
func (sel *selector) best(all []Item, pi *polyIndex, list, poly, used []int32, k int, out []candidate) []candidate {
	start := len(out)
	peak := sel.peak()
	i := sort.Search(len(list), func(j int) bool { return all[list[j]].Difficulty >= peak })
	lo, hi := i-1, i
	skip := func(p int32) bool { return contains(used, p) }
	for {
		for lo >= 0 && skip(list[lo]) {
			lo--
		}
		for hi < len(list) && skip(list[hi]) {
			hi++
		}
		var next candidate
		fromLo := false
		switch {
		case lo < 0 && hi >= len(list):
			return sortCandidates(sel, all, sel.scanPoly(all, pi, poly, used, out, start, k), start, k)
		case lo < 0:
			next = candidate{list[hi], sel.key(all[list[hi]].Difficulty)}
		case hi >= len(list):
			next, fromLo = candidate{list[lo], sel.key(all[list[lo]].Difficulty)}, true
		default:
			next, fromLo = candidate{list[lo], sel.key(all[list[lo]].Difficulty)}, true
			if h := (candidate{list[hi], sel.key(all[list[hi]].Difficulty)}); sel.better(h.key, next.key) {
				next, fromLo = h, false
			}
		}
		if len(out)-start >= k && sel.clearlyWorse(next.key, out[len(out)-1].key) {
			return sortCandidates(sel, all, sel.scanPoly(all, pi, poly, used, out, start, k), start, k)
		}
		out = append(out, next)
		if fromLo {
			lo--
		} else {
			hi++
		}
	}
}

// hopeless tells, for one selection, the partial credit items whose key is surely worse than
// limit, by bounds that need no sum over the categories. With every z_k at most
// zb = (θ − min d)/s + λ < 0 (the student z = −zb logits below every step),
// P(X = h) ≤ e^(h·zb)·P(0), so with u = 1/(e^z − 1) both V ≤ E[X²] ≤ m²·u and E/m ≤ u; with every
// z_k at least za = (θ − max d)/s + λ = z > 0 (above every step), likewise V ≤ m²·u and
// 1 − E/m ≤ u. Under maximum information the item is hopeless when m²·u is below limit, i.e.
// z > ln(1 + m²/limit); under a target p when the nearest E/m can come to p (p − u below the
// steps, 1 − p − u above) is farther than limit, i.e. z > ln(1 + 1/(p − limit)) (1 − p above).
// Those distances are computed once per side and number of steps. The margins keep an item whose
// key might tie the limit (ties go by id).
type hopeless struct {
	sel   *selector
	limit float64
	cut   [2][fastMaxSteps + 1]float64 // by side (0 below, 1 above) and m; 0: not computed yet
}

// far reports whether the item with these steps is hopeless.
func (h *hopeless) far(steps []float64) bool {
	sel := h.sel
	lo, hi := steps[0], steps[0]
	for _, d := range steps[1:] {
		lo, hi = math.Min(lo, d), math.Max(hi, d)
	}
	var side int
	var z float64 // logits beyond the nearest end of the steps
	if zb := (sel.theta-lo)/sel.s + sel.lambda; zb < 0 {
		z = -zb
	} else if za := (sel.theta-hi)/sel.s + sel.lambda; za > 0 {
		side, z = 1, za
	} else {
		return false
	}
	m := len(steps)
	if m > fastMaxSteps {
		return z > h.cutFor(side, m)
	}
	if h.cut[side][m] == 0 {
		h.cut[side][m] = h.cutFor(side, m)
	}
	return z > h.cut[side][m]
}

// cutFor is the distance beyond which an item of m steps on this side is hopeless (+Inf: never).
func (h *hopeless) cutFor(side, m int) float64 {
	if h.sel.target == 0 {
		limit := h.limit * (1 - 1e-9)
		if !(limit > 0) {
			return math.Inf(1)
		}
		return math.Log1p(float64(m*m) / limit)
	}
	near := h.sel.target
	if side == 1 {
		near = 1 - near
	}
	v := near - (h.limit*(1+1e-9) + 1e-15)
	if !(v > 0) {
		return math.Inf(1)
	}
	return math.Log1p(1 / v)
}

// contains reports whether the ascending positions hold p.
func contains(sorted []int32, p int32) bool {
	_, found := slices.BinarySearch(sorted, p)
	return found
}

// sortCandidates orders out[start:] by key, then id, and keeps the first k.
func sortCandidates(sel *selector, all []Item, out []candidate, start, k int) []candidate {
	taken := out[start:]
	slices.SortFunc(taken, func(a, b candidate) int {
		switch {
		case sel.better(a.key, b.key):
			return -1
		case sel.better(b.key, a.key):
			return 1
		}
		return cmp.Compare(all[a.pos].ID, all[b.pos].ID)
	})
	if len(taken) > k {
		out = out[:start+k]
	}
	return out
}
