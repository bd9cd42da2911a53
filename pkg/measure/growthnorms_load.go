package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Loading growth_norms.csv into the bundle (format: growthnorms_file.go). Every problem is
// reported as file:line; a model with any problem is left out of a bundle that then fails to load.

// partialModel gathers a model's rows as they come.
type partialModel struct {
	m     *GrowthModel
	first row
	seen  map[string]int // "part/index" → line
	has   map[string]bool
}

// growthNormsTable reads growth_norms.csv into the bundle's growth norms.
func (l *loader) growthNormsTable(rows []row) {
	models := map[growthKey]*partialModel{}
	var order []growthKey
	for _, r := range rows {
		pm, ok := l.growthRow(r, models, &order)
		if !ok {
			continue
		}
		l.growthPart(r, pm)
	}
	for _, k := range order {
		pm := models[k]
		if l.growthComplete(pm) {
			l.b.growth[k] = pm.m
		}
	}
}

// growthRow finds (or starts) the model of a row.
func (l *loader) growthRow(r row, models map[growthKey]*partialModel, order *[]growthKey) (*partialModel, bool) {
	f, fok := l.framework(r, "framework")
	g, gok := l.p.grade(r, "grade")
	tod, tok := l.p.timeOfYear(r)
	priors, err := parseWindows(r.fields["priors"])
	if err != nil {
		l.p.at(r, "priors %q: %v", r.fields["priors"], err)
	}
	if !fok || !gok || !tok || err != nil {
		return nil, false
	}
	cur := Window{Grade: g, TimeOfYear: tod}
	if last := priors[len(priors)-1]; !last.Before(cur) {
		l.p.at(r, "prior %s is not before the current window %s", last, cur)
		return nil, false
	}
	m := &GrowthModel{Framework: f.Name, Current: cur, Priors: priors}
	k := keyOf(m)
	pm := models[k]
	if pm == nil {
		m.Splines = make([]Spline, len(priors))
		m.Coefficients = make([][]float64, GrowthQuantiles)
		pm = &partialModel{m: m, first: r, seen: map[string]int{}, has: map[string]bool{}}
		models[k] = pm
		*order = append(*order, k)
	}
	return pm, true
}

// growthPart reads one part of a model.
func (l *loader) growthPart(r row, pm *partialModel) {
	part := r.fields["part"]
	idx, err := strconv.Atoi(r.fields["index"])
	if err != nil {
		l.p.at(r, "index %q is not a whole number", r.fields["index"])
		return
	}
	m := pm.m
	var want, most int // values wanted, largest index
	switch part {
	case "knots":
		want, most = SplineKnots, len(m.Priors)
	case "boundaries":
		want, most = 2, len(m.Priors)
	case "range":
		want, most = 2, 1
	case "coefficients":
		want, most = m.columns(), GrowthQuantiles
	default:
		l.p.at(r, "part %q is not knots, boundaries, range or coefficients", part)
		return
	}
	if idx < 1 || idx > most {
		l.p.at(r, "%s index %d is outside 1 … %d", part, idx, most)
		return
	}
	id := fmt.Sprintf("%s/%d", part, idx)
	if line, dup := pm.seen[id]; dup {
		l.p.at(r, "duplicate %s %d of this model (first at line %d)", part, idx, line)
		return
	}
	pm.seen[id] = r.line
	v, ok := l.numbers(r, "values", want)
	if !ok {
		return
	}
	switch part {
	case "knots":
		if !nondecreasing(v) {
			l.p.at(r, "knots %v do not increase", v)
			return
		}
		copy(m.Splines[idx-1].Knots[:], v)
	case "boundaries":
		if !(v[0] < v[1]) {
			l.p.at(r, "boundaries %v: the lower is not below the upper", v)
			return
		}
		copy(m.Splines[idx-1].Boundaries[:], v)
	case "range":
		if v[0] > v[1] {
			l.p.at(r, "range %v: the lowest is above the highest", v)
			return
		}
		// The quantiles are clamped to this range, and a cut is answered as an ability a request
		// may send back: the range stays within what a request accepts.
		if v[0] < -MaxAbsMeasure || v[1] > MaxAbsMeasure {
			l.p.at(r, "range %v: beyond the measures a request accepts (±%d)", v, MaxAbsMeasure)
			return
		}
		m.Lowest, m.Highest = v[0], v[1]
	case "coefficients":
		m.Coefficients[idx-1] = v
	}
	pm.has[id] = true
}

// numbers reads a column of exactly want finite numbers separated by ";".
func (l *loader) numbers(r row, col string, want int) ([]float64, bool) {
	parts := strings.Split(r.fields[col], ";")
	if len(parts) != want {
		l.p.at(r, "%s has %d numbers; want %d", col, len(parts), want)
		return nil, false
	}
	v := make([]float64, want)
	for k, s := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			l.p.at(r, "%s: number %d %q is not a finite number", col, k+1, s)
			return nil, false
		}
		v[k] = x
	}
	return v, true
}

func nondecreasing(v []float64) bool {
	for k := 1; k < len(v); k++ {
		if v[k] < v[k-1] {
			return false
		}
	}
	return true
}

// growthComplete checks that a model has every part, and knots inside its boundaries.
func (l *loader) growthComplete(pm *partialModel) bool {
	m := pm.m
	var missing []string
	need := func(part string, n int) {
		for k := 1; k <= n; k++ {
			if id := fmt.Sprintf("%s/%d", part, k); !pm.has[id] {
				if _, seen := pm.seen[id]; !seen {
					missing = append(missing, fmt.Sprintf("%s %d", part, k))
				}
			}
		}
	}
	need("knots", len(m.Priors))
	need("boundaries", len(m.Priors))
	need("range", 1)
	need("coefficients", GrowthQuantiles)
	name := fmt.Sprintf("%s %s from %s", m.Framework, m.Current, formatWindows(m.Priors))
	if len(missing) > 0 {
		if len(missing) > 5 {
			missing = append(missing[:5], fmt.Sprintf("… %d more", len(missing)-5))
		}
		l.p.at(pm.first, "growth model %s lacks %s", name, strings.Join(missing, ", "))
		return false
	}
	if len(pm.has) != len(pm.seen) {
		return false // a part with a problem, already reported
	}
	for k, s := range m.Splines {
		if !(s.Boundaries[0] < s.Knots[0] && s.Knots[SplineKnots-1] < s.Boundaries[1]) {
			l.p.at(pm.first, "growth model %s: prior %d's knots %v are not inside its boundaries %v", name, k+1, s.Knots, s.Boundaries)
			return false
		}
	}
	return true
}

// GrowthNorms returns the bundle's growth model for a framework, current window and prior
// windows (older first); ok is false where the bundle has none (the file is optional).
func (b *Bundle) GrowthNorms(framework string, current Window, priors []Window) (*GrowthModel, bool) {
	if len(priors) < 1 || len(priors) > 2 {
		return nil, false
	}
	k := growthKey{framework: framework, current: current, order: len(priors)}
	copy(k.priors[:], priors)
	m, ok := b.growth[k]
	return m, ok
}

// GrowthModelFor picks the model that answers for a student (§15): with two priors (older first)
// and a two-prior model for those windows, that one; otherwise the one-prior model of the
// latest prior's window; ok is false when neither exists.
func (b *Bundle) GrowthModelFor(framework string, current Window, priors []Window) (*GrowthModel, bool) {
	if len(priors) == 2 {
		if m, ok := b.GrowthNorms(framework, current, priors); ok {
			return m, true
		}
	}
	if len(priors) == 0 {
		return nil, false
	}
	return b.GrowthNorms(framework, current, priors[len(priors)-1:])
}
