package measure

import (
	"math"
	"sort"
)

// polyIndex is what a Bank keeps of its partial credit items for the selection: each item's step
// ratios g_k = e^(λ − (d_k − ref)/s) relative to one reference difficulty, so that E and V at an
// ability cost multiplications and one division (as the estimators' sums, pcm_sums.go), and the
// widest distance of a step from its item's difficulty, which bounds where an item's steps can be
// when the walk has only its difficulty to go by, and the information envelope (envelope).
type polyIndex struct {
	ref  float64   // reference difficulty (units): the bank's median
	span float64   // max |d_k − difficulty| over the items (units)
	at   []int32   // offset in coef of each position's item; −1 for a dichotomous one
	coef []float64 // per item: reach (max |a_h|, +Inf where a ratio would leave e^±700), vmax, 1, g_1 … g_m
	env  *envelope
}

// newPolyIndex indexes the partial credit items of all (nil if there are none).
func newPolyIndex(all []Item, poly []int32, ref, s, lambda float64) *polyIndex {
	if len(poly) == 0 {
		return nil
	}
	pi := &polyIndex{ref: ref, at: make([]int32, len(all)), env: newEnvelope()}
	for i := range pi.at {
		pi.at[i] = -1
	}
	var scratch envItem
	for _, p := range poly {
		it := all[p]
		pi.at[p] = int32(len(pi.coef))
		vmax := pi.env.add(&scratch, it.Steps, it.Difficulty, s, lambda)
		pi.coef = append(pi.coef, 0, vmax, 1) // the 1: a block of count 1 for the estimators' sums
		reach, a := 0.0, 0.0
		for _, d := range it.Steps {
			pi.span = max(pi.span, math.Abs(d-it.Difficulty))
			u := lambda - (d-ref)/s
			a += u
			reach = max(reach, math.Abs(a))
			if math.Abs(u) > maxRatioLogits {
				reach = math.Inf(1)
			}
			pi.coef = append(pi.coef, math.Exp(u))
		}
		pi.coef[pi.at[p]] = reach
	}
	return pi
}

// vmax is an upper bound of the information of the item at position p at any ability.
func (pi *polyIndex) vmax(p int32) float64 { return pi.coef[pi.at[p]+1] }

// moments returns E and V of the item at position p at x = (θ − ref)/s, y = e^x, from its ratios
// by the estimators' sums (fastScore2, fastScore3, fastScoreM), and false where a term could leave e^±340 (the
// caller then takes the log-space sums).
func (pi *polyIndex) moments(p int32, m int, x, y float64) (e, v float64, ok bool) {
	off := pi.at[p]
	if m > fastMaxSteps || pi.coef[off]+float64(m)*math.Abs(x) > fastReach {
		return 0, 0, false
	}
	block := pi.coef[off+2 : int(off)+3+m]
	var h, dE float64
	switch m {
	case 2:
		h, dE, v = fastScore2(block, y)
	case 3:
		h, dE, v = fastScore3(block, y)
	default:
		h, dE, v = fastScoreM(block, m, y)
	}
	return h + dE, v, true
}

// reach is, by side as in scanPoly, how far (logits) from the bound point a partial credit item
// may lie and still reach limit: the envelope's reach under maximum information, else +Inf.
func (sel *selector) reach(pi *polyIndex, limit float64) [2]float64 {
	if sel.target == 0 {
		if above, below, ok := pi.env.reach(limit); ok {
			return [2]float64{above, below}
		}
	}
	return [2]float64{math.Inf(1), math.Inf(1)}
}

// keptBest holds the k best keys met so far, best first: the k-th is the limit an item must reach.
type keptBest struct {
	sel  *selector
	keys []float64
	k    int
}

// add counts key in.
func (kb *keptBest) add(key float64) {
	i := len(kb.keys)
	for i > 0 && kb.sel.better(key, kb.keys[i-1]) {
		i--
	}
	if i >= kb.k {
		return
	}
	if len(kb.keys) < kb.k {
		kb.keys = append(kb.keys, 0)
	}
	copy(kb.keys[i+1:], kb.keys[i:len(kb.keys)-1])
	kb.keys[i] = key
}

// limit is the k-th best key, and whether k are known.
func (kb *keptBest) limit() (float64, bool) {
	if len(kb.keys) < kb.k {
		return 0, false
	}
	return kb.keys[kb.k-1], true
}

// infoCut is the distance (logits) beyond an item's steps past which its information is surely
// below limit: with r = e^(−z), P(X = h) <= r^h·P(0) (the hopeless bounds), so
// V <= E[X²] <= Σ h²·r^h = r(1 + r)/(1 − r)³ whatever the number of steps; the largest r with
// that bound at most limit·(1 − 1e-9) is found by bisection.
func infoCut(limit float64) float64 {
	want := limit * (1 - 1e-9)
	if !(want > 0) {
		return math.Inf(1)
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		r := 0.5 * (lo + hi)
		if r*(1+r)/((1-r)*(1-r)*(1-r)) <= want {
			lo = r
		} else {
			hi = r
		}
	}
	if lo == 0 {
		return math.Inf(1)
	}
	return -math.Log(lo)
}

// scanPoly appends to out the partial credit items of poly (ascending positions, so in order of
// difficulty) that are not in used and may be among the k best, with their keys; out's
// candidates from start on are the walk's over the dichotomous items. It walks outwards from the
// point the bounds are taken from, θ + λ·s, nearer difficulty first. Once k keys are known, a
// side ends where the item's difficulty is farther from that point than any item at least as
// informative as the k-th best can be (the bank's envelope, which holds inside an item's steps),
// or where even the nearest step an item on it can have (its difficulty less the bank's widest
// step distance) is farther than the bounds beyond the steps allow (infoCut where the envelope
// does not reach; hopeless.cutFor under a target): every item beyond is surely worse than the
// k-th best. An item whose information nowhere reaches the k-th best is passed over unread. Each
// other item's key is first taken from the index's ratios; only an item within 1e-9 of the limit
// by that has its key computed the plain way (polyKey), which is the key it is ranked by.
func (sel *selector) scanPoly(all []Item, pi *polyIndex, poly, used []int32, out []candidate, start, k int) []candidate {
	if len(poly) == 0 {
		return out
	}
	out = sortCandidates(sel, all, out, start, k)
	var keyBuf [8]float64
	kb := keptBest{sel: sel, keys: keyBuf[:0], k: k}
	for _, c := range out[start:] {
		kb.add(c.key)
	}
	var bd walkBounds
	bound := sel.theta + sel.lambda*sel.s
	x := (sel.theta - pi.ref) / sel.s
	y := math.Exp(x)
	i := sort.Search(len(poly), func(j int) bool { return all[poly[j]].Difficulty >= bound })
	lo, hi := i-1, i
	for lo >= 0 || hi < len(poly) {
		var p int32
		var side int // 0: the item's steps may lie above the bound point; 1: below
		var dist float64
		if hi < len(poly) && (lo < 0 || all[poly[hi]].Difficulty-bound <= bound-all[poly[lo]].Difficulty) {
			p, side = poly[hi], 0
			dist = (all[p].Difficulty - bound) / sel.s
		} else {
			p, side = poly[lo], 1
			dist = (bound - all[p].Difficulty) / sel.s
		}
		limit, known := kb.limit()
		if known && bd.at(sel, pi, limit).ends(side, dist, pi.span/sel.s) {
			if side == 0 {
				hi = len(poly)
			} else {
				lo = -1
			}
			continue
		}
		if side == 0 {
			hi++
		} else {
			lo--
		}
		if known && sel.target == 0 && pi.vmax(p) < limit*(1-1e-9) || contains(used, p) {
			continue
		}
		steps := all[p].Steps
		if known && bd.worse(pi, p, steps, x, y) {
			continue
		}
		key := sel.polyKey(steps)
		out = append(out, candidate{p, key})
		kb.add(key)
	}
	return out
}

// walkBounds are scanPoly's bounds for one limit (the k-th best key).
type walkBounds struct {
	h     hopeless
	cut   [2]float64 // by side: logits beyond an item's steps (infoCut, hopeless.cutFor)
	reach [2]float64 // by side: logits from the bound point (the envelope)
}

// at makes bd the bounds of limit, computing them only when it changed.
func (bd *walkBounds) at(sel *selector, pi *polyIndex, limit float64) *walkBounds {
	if bd.h.sel != nil && limit == bd.h.limit {
		return bd
	}
	bd.h = hopeless{sel: sel, limit: limit}
	bd.reach = sel.reach(pi, limit)
	for sd := range bd.cut {
		switch {
		case sel.target != 0:
			bd.cut[sd] = bd.h.cutFor(sd, 1)
		case bd.reach[sd] < math.Inf(1):
			bd.cut[sd] = math.Inf(1) // the envelope's reach holds; infoCut's bisection is not needed
		default:
			bd.cut[sd] = infoCut(limit)
		}
	}
	return bd
}

// ends reports whether every item on this side from dist logits off (its difficulty's distance
// from the bound point; span, the bank's widest step distance in logits) is surely worse.
func (bd *walkBounds) ends(side int, dist, span float64) bool {
	z := dist - span
	return z > 0 && z > bd.cut[side] || dist > bd.reach[side]
}

// worse reports whether the item at position p is surely worse than the limit: by its key from
// the index's ratios with a margin of 1e-9, or where those cannot be used by hopeless's bounds.
func (bd *walkBounds) worse(pi *polyIndex, p int32, steps []float64, x, y float64) bool {
	sel, limit := bd.h.sel, bd.h.limit
	e, v, ok := pi.moments(p, len(steps), x, y)
	switch {
	case !ok:
		return bd.h.far(steps)
	case sel.target == 0:
		return v < limit*(1-1e-9)
	}
	return math.Abs(e/float64(len(steps))-sel.target) > limit*(1+1e-9)+1e-12
}
