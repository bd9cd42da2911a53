package measure

import "math"

// The information envelope of a bank's partial credit items. An item's information V depends on
// the ability only through u = θ/s + λ − difficulty/s (logits from the item's difficulty), and
// its logarithm changes by at most m per logit (dV/du is the score's third central moment, at
// most m·V in size for a score in 0 … m). So V at two points u_a < u_b bounds it between them:
// V(u) ≤ min(V_a·e^(m(u−u_a)), V_b·e^(m(u_b−u))) ≤ √(V_a·V_b)·e^(m(u_b−u_a)/2). Evaluating V on a
// grid of such cells over an item's steps (beyond them the bound of infoCut holds) gives, for
// every level ℓ of a geometric ladder, an interval of u outside which V < ℓ for sure, and an upper
// bound of V anywhere. The bank keeps per level the widest reach of those intervals on each side
// of the bound point; the selection's walk ends a side once it is farther than that reach at the
// k-th best key found, which holds inside an item's steps as well as beyond them.
const (
	envRung   = 0.02  // the ladder's levels are e^(envRung·q) for integers q
	envFloor  = 0.005 // the lowest level kept; below it the walk goes by infoCut alone
	envCell   = 0.1   // a cell's width times m: its bound exceeds the larger end by at most e^0.05
	envEvals  = 8192  // evaluations allowed an item; past them it is bounded by infoCut alone
	envMargin = 1e-9  // relative slack on an evaluated V, far above its rounding
	envAbsTol = 1e-12 // absolute slack on an evaluated V, which may lose its last bits near 0
	// envTopIndex caps the ladder at e^(0.02·600) ≈ 1.6e5 (above m²/4 for m up to 800); an item
	// whose bound reaches it counts as reaching every level below it, none above.
	envTopIndex = 865
)

// envGrow is e^(envCell/2), a full cell's factor.
var envGrow = math.Exp(envCell / 2)

// envelope is the bank's ladder: for each level (envLevels), how far beyond the bound point,
// in logits, an item at least that informative can lie on either side.
type envelope struct {
	above []float64 // items harder than the bound point (u < 0): the largest −u with V ≥ level
	below []float64 // easier ones (u > 0): the largest u with V ≥ level
	cut   []float64 // infoCut of each level, for items bounded by it alone (filled as needed)
}

// envQlo is the q of the ladder's lowest level, the first at or above envFloor.
var envQlo = int(math.Ceil(math.Log(envFloor) / envRung))

// envLevels are the ladder's levels from envQlo on, computed once so that every use agrees.
var envLevels = func() []float64 {
	l := make([]float64, envTopIndex+2)
	for i := range l {
		l[i] = math.Exp(envRung * float64(envQlo+i))
	}
	return l
}()

// rung is the index in envLevels of the highest level at most v, −1 when v is below them all
// and envTopIndex when above.
func rung(v float64) int {
	if !(v >= envLevels[0]) {
		return -1
	}
	if v >= envLevels[envTopIndex] {
		return envTopIndex
	}
	return rungFrom(v, min(max(int(math.Log(v)/envRung)-envQlo, 0), envTopIndex))
}

// rungFrom is rung of v ≥ envLevels[0], searched from index i (0 … envTopIndex): from the last
// cell's, it is a few levels away.
func rungFrom(v float64, i int) int {
	if v >= envLevels[envTopIndex] {
		return envTopIndex
	}
	for envLevels[i] > v {
		i--
	}
	for envLevels[i+1] <= v {
		i++
	}
	return i
}

// newEnvelope prepares an empty ladder.
func newEnvelope() *envelope { return &envelope{} }

// grow makes room for level index i.
func (ev *envelope) grow(i int) {
	for len(ev.above) <= i {
		ev.above = append(ev.above, math.Inf(-1))
		ev.below = append(ev.below, math.Inf(-1))
	}
}

// infoCutAt is infoCut of level index i.
func (ev *envelope) infoCutAt(i int) float64 {
	for len(ev.cut) <= i {
		ev.cut = append(ev.cut, infoCut(envLevels[len(ev.cut)]))
	}
	return ev.cut[i]
}

// envItem is the scratch of one item's cells: by level index, the lowest u_a and highest u_b of
// the cells whose bound reaches that level (and, once folded, every level below).
type envItem struct {
	lo, hi  []float64
	offsets []float64
	grid    envGrid
}

// add adds an item (its steps, difficulty, units per logit s and λ) and returns the upper bound
// of its information anywhere.
func (ev *envelope) add(scratch *envItem, steps []float64, diff, s, lambda float64) float64 {
	m := float64(len(steps))
	eLo, eHi := math.Inf(1), math.Inf(-1)
	for _, d := range steps {
		eLo, eHi = min(eLo, (d-diff)/s), max(eHi, (d-diff)/s)
	}
	floor := envLevels[0]
	reach := infoCut(floor) // beyond the steps by this much, V < floor
	start, end := eLo-reach, eHi+reach
	if !finite(end - start) {
		return ev.addLoose(steps, eLo, eHi)
	}
	offsets := scratch.offsets[:0]
	for _, d := range steps {
		offsets = append(offsets, (d-diff)/s)
	}
	scratch.offsets = offsets
	g := &scratch.grid
	g.reset(offsets, envCell/m)
	margin := func(v float64) float64 { return v*(1+envMargin) + envAbsTol }
	scratch.lo, scratch.hi = scratch.lo[:0], scratch.hi[:0]
	top, last := -1, -1
	vmax := floor
	u, va := start, margin(g.at(start))
	for evals := 1; u < end; evals++ {
		if evals > envEvals {
			return ev.addLoose(steps, eLo, eHi)
		}
		w, grow := envCell/m, envGrow                   // a cell cut short by end grows less: grow still bounds it
		if va < floor && math.Log(floor/va) > envCell { // V stays below floor for ln(floor/va)/m logits at least
			w = math.Log(floor/va) / m
			grow = math.Sqrt(floor / va)
		}
		ub := u + w
		var vb float64
		switch {
		case ub >= end:
			ub = end
			vb = margin(g.at(ub))
		case w == envCell/m:
			vb = margin(g.next(ub))
		default:
			vb = margin(g.at(ub))
		}
		bound := math.Sqrt(va*vb) * grow
		if bound >= floor {
			i := rungFrom(bound, max(last, 0))
			last = i
			for len(scratch.lo) <= i {
				scratch.lo = append(scratch.lo, math.Inf(1))
				scratch.hi = append(scratch.hi, math.Inf(-1))
			}
			scratch.lo[i], scratch.hi[i] = min(scratch.lo[i], u), max(scratch.hi[i], ub)
			top, vmax = max(top, i), max(vmax, bound)
		}
		u, va = ub, vb
	}
	ev.grow(top)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := top; i >= 0; i-- {
		lo, hi = min(lo, scratch.lo[i]), max(hi, scratch.hi[i])
		ev.above[i], ev.below[i] = max(ev.above[i], -lo), max(ev.below[i], hi)
	}
	return vmax
}

// addLoose adds an item too wide or too fine for the grid: V ≤ m²/4 anywhere (the variance of a
// score in 0 … m), and below a level beyond infoCut of it past the steps.
func (ev *envelope) addLoose(steps []float64, eLo, eHi float64) float64 {
	m := float64(len(steps))
	vmax := m * m / 4 * (1 + envMargin)
	top := rung(vmax)
	ev.grow(top)
	for i := 0; i <= top; i++ {
		c := ev.infoCutAt(i)
		ev.above[i], ev.below[i] = max(ev.above[i], c-eLo), max(ev.below[i], eHi+c)
	}
	return vmax
}

// reach is how far (logits) beyond the bound point an item can lie on each side and still have
// information of at least limit; false when limit is below the ladder.
func (ev *envelope) reach(limit float64) (above, below float64, ok bool) {
	i := rung(limit * (1 - envMargin))
	switch {
	case i < 0 || i == envTopIndex: // below the ladder, or above its top: unknown
		return 0, 0, false
	case i >= len(ev.above): // above every item's bound
		return math.Inf(-1), math.Inf(-1), true
	}
	return ev.above[i], ev.below[i], true
}
