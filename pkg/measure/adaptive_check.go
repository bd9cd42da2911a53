package measure

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// resolve checks req against the bank (every problem through problem, under the field's wire
// path) and, when it is valid, returns the session it describes with the defaults filled in.
func (bk *Bank) resolve(req *AdaptiveRequest, problem func(field, format string, args ...any)) (*session, bool) {
	ok := true
	bad := func(field, format string, args ...any) {
		problem(field, format, args...)
		ok = false
	}
	fw := bk.fw
	s := &session{framework: fw.Name, seed: req.Seed, k: 1, z: 0}
	// Items answered: known, of this framework, once each.
	s.items = req.Items
	s.answered = make([]int32, 0, len(req.Items))
	s.test.Items = make([]Difficulty, 0, len(req.Items))
	for i, r := range req.Items {
		p, good := bk.item("items", i, ".id", r.ID, bad)
		if !good {
			continue
		}
		s.answered = append(s.answered, p)
		item := &bk.all[p]
		d := Difficulty{Measure: item.Difficulty, Count: 1}
		if item.Polytomous() {
			d.Steps = item.Steps
		}
		s.test.Items = append(s.test.Items, d)
		if x, most := r.Points(), item.MaxScore(); x < 0 || x > most {
			bad(elementPath("items", i, ".result"), "must be 0 … %d (the maximum score of item %q), got %d", most, clip(r.ID), x)
		} else {
			s.test.Correct += x
		}
	}
	s.used = make([]int32, len(s.answered), len(s.answered)+len(req.Exclude))
	copy(s.used, s.answered)
	slices.Sort(s.used)
	for j := 1; j < len(s.used); j++ {
		if s.used[j] == s.used[j-1] {
			bk.repeats(req.Items, bad) // rare: find and name them the slow way
			break
		}
	}

	// Pool and exclude: known ids of this framework; a repeat is harmless.
	if len(req.Pool) > 0 {
		s.pool = make([]int32, 0, len(req.Pool))
		for i, id := range req.Pool {
			if p, good := bk.item("pool", i, "", id, bad); good {
				s.pool = append(s.pool, p)
			}
		}
		slices.Sort(s.pool)
		s.pool = slices.Compact(s.pool)
		s.poolDich = s.pool
		if len(bk.poly) > 0 {
			s.poolDich = nil
			for _, p := range s.pool {
				if bk.all[p].Polytomous() {
					s.poolPoly = append(s.poolPoly, p)
				} else {
					s.poolDich = append(s.poolDich, p)
				}
			}
		}
	}
	for i, id := range req.Exclude {
		if p, good := bk.item("exclude", i, "", id, bad); good {
			s.used = append(s.used, p)
		}
	}
	slices.Sort(s.used)

	// Content balancing: known strands of this framework, shares > 0, normalised.
	if len(req.Strands) > 0 {
		names := make([]string, 0, len(req.Strands))
		for name := range req.Strands {
			names = append(names, name)
		}
		slices.Sort(names) // problems in a stable order
		sum := 0.0
		for _, name := range names {
			share := req.Strands[name]
			field := "strands[" + strconv.Quote(clip(name)) + "]"
			if !slices.Contains(fw.StrandNames, name) {
				bad(field, "unknown %s strand %q (known: %s)", fw.Name, clip(name), strings.Join(fw.StrandNames, ", "))
			}
			if !finite(share) || share <= 0 {
				bad(field, "the share of strand %q must be a number greater than 0, got %v", clip(name), share)
				continue
			}
			sum += share
		}
		if ok {
			s.shares = make(map[string]float64, len(names))
			for _, name := range names {
				s.shares[name] = req.Strands[name] / sum
			}
		}
	}

	// Selection settings.
	if k := req.Randomesque; k != nil {
		if *k < 1 {
			bad("randomesque", "must be 1 or more, got %d", *k)
		} else {
			s.k = *k
		}
	}
	if p := req.TargetSuccess; p != nil {
		if !(*p > 0 && *p < 1) {
			bad("targetSuccess", "must be between 0 and 1 (both excluded), got %v", *p)
		} else {
			s.target = *p
		}
	}

	if !bk.checkStop(s, &req.Stop, bad) {
		ok = false
	}
	if prior, good := bk.prior(req, s.pool, bad); good {
		s.prior = prior
	} else {
		ok = false
	}
	return s, ok
}

// maxQuoted bounds how much of a caller's text a problem repeats: a 1 MB id is named by its
// start, not sent back whole.
const maxQuoted = 64

// clip is s as a problem quotes it: whole when short, else its first maxQuoted bytes (cut
// between characters) and "…".
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// elementPath is list[i]+suffix, built only when a problem names it.
func elementPath(list string, i int, suffix string) string {
	return list + "[" + strconv.Itoa(i) + "]" + suffix
}

// item finds the id of list[i] in the bank and returns its position, or reports why it cannot
// be used.
func (bk *Bank) item(list string, i int, suffix, id string, bad func(field, format string, args ...any)) (int32, bool) {
	if p, ok := bk.pos[id]; ok {
		return p, true
	}
	item, known := bk.lookup(id)
	switch {
	case id == "":
		bad(elementPath(list, i, suffix), "is required (an item id)")
	case !known:
		bad(elementPath(list, i, suffix), "unknown item id %q", clip(id))
	default:
		bad(elementPath(list, i, suffix), "%q is a %s item; the request's framework is %s", id, item.Framework, bk.fw.Name)
	}
	return 0, false
}

// repeats names every id of items that repeats an earlier one.
func (bk *Bank) repeats(items []Response, bad func(field, format string, args ...any)) {
	first := make(map[string]int, len(items))
	for i, r := range items {
		if _, known := bk.pos[r.ID]; !known {
			continue // already reported
		}
		if j, dup := first[r.ID]; dup {
			bad(elementPath("items", i, ".id"), "%q repeats items[%d].id", clip(r.ID), j)
			continue
		}
		first[r.ID] = i
	}
}

// checkStop checks the stop rules and fills in their defaults.
func (bk *Bank) checkStop(s *session, st *StopRules, bad func(field, format string, args ...any)) bool {
	ok := true
	s.maxItems = DefaultMaxItems
	if m := st.MaxItems; m != nil {
		if *m < 1 {
			bad("stop.maxItems", "must be 1 or more, got %d", *m)
			ok = false
		} else {
			s.maxItems = *m
		}
	}
	s.minItems = min(DefaultMinItems, s.maxItems)
	if m := st.MinItems; m != nil {
		switch {
		case *m < 0:
			bad("stop.minItems", "must be 0 or more, got %d", *m)
			ok = false
		case *m > s.maxItems && st.MaxItems == nil:
			bad("stop.minItems", "%d is more than stop.maxItems (%d, the default)", *m, s.maxItems)
			ok = false
		case *m > s.maxItems:
			bad("stop.minItems", "%d is more than stop.maxItems (%d)", *m, s.maxItems)
			ok = false
		default:
			s.minItems = *m
		}
	}
	if u := st.TargetUncertainty; u != nil {
		if !finite(*u) || *u <= 0 || *u > MaxUncertainty {
			bad("stop.targetUncertainty", "must be greater than 0 and at most %d, got %v", MaxUncertainty, *u)
			ok = false
		}
		s.targetSD = u
	}
	if c := st.Cut; c != nil {
		if !finite(*c) || math.Abs(*c) > MaxAbsMeasure {
			bad("stop.cut", "must be a number between %d and %d, got %v", -MaxAbsMeasure, MaxAbsMeasure, *c)
			ok = false
		}
		s.cut = c
	}
	confidence := DefaultConfidence
	if c := st.Confidence; c != nil {
		if !(*c > 0 && *c < 1) {
			bad("stop.confidence", "must be between 0 and 1 (both excluded), got %v", *c)
			ok = false
		} else {
			confidence = *c
		}
	}
	// z = Φ⁻¹((1 + confidence)/2) = √2·erf⁻¹(confidence).
	s.z = math.Sqrt2 * math.Erfinv(confidence)
	return ok
}

// p0 refuses what needs the framework's norm curve when it has none: a grade's prior, a prior
// grown over elapsed days.
func needsCurve(fw *Framework, req *AdaptiveRequest, days *float64, bad func(field, format string, args ...any)) bool {
	if fw.HasNormCurve() {
		return true
	}
	switch {
	case req.PriorAbility == nil && req.Grade != nil:
		bad("grade", "the bundle has no norm curve for framework %q, so a grade cannot choose the prior (send a prior, or neither)", fw.Name)
		return false
	case req.PriorAbility != nil && days != nil && *days > 0:
		bad("elapsedDays", "the bundle has no norm curve for framework %q, so a prior cannot be moved forward (send 0)", fw.Name)
		return false
	}
	return true
}

// prior is the session's prior (§11): the request's own grown over elapsedDays, else the norm
// curve at the grade and time of year, else the median difficulty of the pool or the bank; the
// last two with the population SD.
func (bk *Bank) prior(req *AdaptiveRequest, pool []int32, bad func(field, format string, args ...any)) (Normal, bool) {
	fw := bk.fw
	ok := true
	a, u, days := req.PriorAbility, req.PriorUncertainty, req.ElapsedDays
	switch {
	case a != nil && u == nil:
		bad("priorUncertainty", "is required with priorAbility (a prior is both or neither)")
		ok = false
	case a == nil && u != nil:
		bad("priorAbility", "is required with priorUncertainty (a prior is both or neither)")
		ok = false
	case a == nil && days != nil:
		bad("elapsedDays", "needs priorAbility and priorUncertainty (it moves their prior forward)")
		ok = false
	}
	var grade int
	if g := req.Grade; g != nil {
		if *g < 0 || *g >= Grades {
			bad("grade", "must be between 0 (Kindergarten) and 12, got %d", *g)
			ok = false
		}
		grade = *g
	}
	offset := 0.5 // MOY
	if t := req.TimeOfYear; t != nil {
		canonical, _ := TimeOfYear(*t)
		switch canonical {
		case "BOY":
			offset = 0
		case "MOY":
		case "EOY":
			offset = 1
		default:
			bad("timeOfYear", "must be BOY, MOY or EOY, got %q", clip(*t))
			ok = false
		}
		if req.Grade == nil {
			bad("timeOfYear", "needs grade (together they choose the prior)")
			ok = false
		}
	}
	if a != nil && u != nil {
		zero := 0.0
		if days == nil {
			days = &zero
		}
		if !CheckPrior(bad, "", a, u, days) {
			ok = false
		}
	}
	if !needsCurve(fw, req, days, bad) {
		ok = false
	}
	if !ok {
		return Normal{}, false
	}
	p, err := fw.prepared()
	if err != nil {
		bad("framework", "%v", err)
		return Normal{}, false
	}
	switch {
	case a != nil:
		return p.grow(Normal{Mean: *a, SD: *u}, *days, fw.GrowthSD, fw.PopulationSD), true
	case req.Grade != nil:
		return Normal{Mean: p.curve.at(float64(grade) + offset), SD: fw.PopulationSD}, true
	case len(pool) > 0:
		return Normal{Mean: bk.medianOf(pool), SD: fw.PopulationSD}, true
	}
	return Normal{Mean: bk.median, SD: fw.PopulationSD}, true
}
