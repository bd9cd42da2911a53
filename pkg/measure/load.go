package measure

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The files of a content bundle and their headers (README.md, "Content bundle format").
var (
	frameworksHeader = []string{"name", "label", "negative_prefix", "units_per_logit", "success_at_match",
		"display_min", "display_max", "growth_sd", "population_sd", "extreme_adjust", "strand_spread"}
	gradesHeader     = []string{"framework", "grade", "norm", "display_max"}
	strandsHeader    = []string{"framework", "strand"}
	itemsHeader      = []string{"id", "framework", "strand", "difficulty"}
	linksHeader      = []string{"id", "framework", "kind", "slope", "intercept", "min", "max", "linking_error"}
	linkPointsHeader = []string{"link", "scale_score", "measure"}
	benchmarksHeader = []string{"framework", "grade", "time_of_year", "lower", "upper"}
	formsHeader      = []string{"form", "framework", "item"}
	normsHeader      = []string{"framework", "grade", "time_of_year", "percentile", "measure"}
)

// The optional last columns of a file (any of them, in this order): items.csv's steps of a
// polytomous item; frameworks.csv's forecast subject and the item-ids Bayes path's id prefixes;
// the program that owns an item, form or link (program.go).
var (
	itemsOptional      = []string{"steps", "program"}
	frameworksOptional = []string{"subject", "id_prefixes"}
	programOptional    = []string{"program"}
)

var bundleFiles = map[string]struct {
	header   []string
	required bool
	optional []string // columns the header may end with
}{
	"frameworks.csv":   {frameworksHeader, true, frameworksOptional},
	"grades.csv":       {gradesHeader, false, nil},
	"strands.csv":      {strandsHeader, true, nil},
	"items.csv":        {itemsHeader, true, itemsOptional},
	"benchmarks.csv":   {benchmarksHeader, false, nil},
	"links.csv":        {linksHeader, false, programOptional},
	"link_points.csv":  {linkPointsHeader, false, nil},
	"forms.csv":        {formsHeader, false, programOptional},
	"norms.csv":        {normsHeader, false, nil},
	"growth_norms.csv": {growthNormsHeader, false, nil},
}

// maxBundleFileBytes bounds each file of a content dir, so that a mistaken mount (a disk image,
// a log) fails fast instead of being read into memory at every reload. A bundle in a ConfigMap
// is at most 1 MiB; the demo's items.csv is about 100 KiB.
const maxBundleFileBytes = 256 << 20

// LoadDir loads a content bundle from a flat directory (a Kubernetes ConfigMap mount works:
// names starting with "." are ignored, symlinked files are followed). Only regular files are
// read, each of at most 256 MiB: a named pipe, a device or a socket with a bundle file's name is
// a problem, reported without reading it (opening it does not wait).
func LoadDir(dir string) (*Bundle, error) {
	entries, err := readDir(dir)
	var b *Bundle
	if err != nil {
		err = fmt.Errorf("read bundle directory: %w", err)
	} else {
		b, err = loadBundle(entries, dirReader(dir))
	}
	if err != nil {
		return nil, fmt.Errorf("load content bundle %s: %w", dir, err)
	}
	return b, nil
}

// dirReader reads the files of dir as LoadDir does.
func dirReader(dir string) func(name string) ([]byte, error) {
	return func(name string) ([]byte, error) { return readCapped(filepath.Join(dir, name), maxBundleFileBytes) }
}

// LoadFS loads a content bundle from the top directory of fsys. It returns either a complete,
// validated bundle or an error listing every problem found (up to 50), each as "file:line: reason".
// Names starting with "." and files not ending in .csv (a README) are ignored; an unknown .csv
// file is an error, so that a misspelt file name cannot silently drop content.
func LoadFS(fsys fs.FS) (*Bundle, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read bundle directory: %w", err)
	}
	return loadBundle(entries, func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) })
}

// readsFile reports whether loading a bundle reads the file of the entry, and whether it is a
// name it knows: not hidden, not a directory, ending in .csv.
func readsFile(e fs.DirEntry) (reads, known bool) {
	name := e.Name()
	if strings.HasPrefix(name, ".") || e.IsDir() || !strings.HasSuffix(name, ".csv") {
		return false, false
	}
	_, known = bundleFiles[name]
	return true, known
}

// CheckDir loads the bundle in dir exactly as LoadDir does, and returns it or every problem
// found (not at most 50), each as "file:line: reason" (or "file: reason").
func CheckDir(dir string) (*Bundle, []string) {
	entries, err := readDir(dir)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", dir, err)}
	}
	b, err := loadBundleWith(entries, dirReader(dir), problems{all: true})
	if err != nil {
		return nil, strings.Split(err.Error(), "\n")
	}
	return b, nil
}

// loadBundle loads the bundle of a directory that lists entries, reading each file with read.
func loadBundle(entries []fs.DirEntry, read func(name string) ([]byte, error)) (*Bundle, error) {
	return loadBundleWith(entries, read, problems{})
}

func loadBundleWith(entries []fs.DirEntry, read func(name string) ([]byte, error), p problems) (*Bundle, error) {
	tables := map[string][]row{}
	for _, e := range entries {
		name := e.Name()
		switch reads, known := readsFile(e); {
		case !reads:
			continue
		case !known:
			p.add(name, 0, "unknown bundle file; want one of %s", strings.Join(knownFiles(), ", "))
			continue
		}
		spec := bundleFiles[name]
		data, err := read(name)
		if err != nil {
			p.add(name, 0, "%v", err)
			continue
		}
		tables[name] = readTableWith(&p, name, data, spec.header, spec.optional)
	}
	for _, name := range knownFiles() {
		if _, ok := tables[name]; !ok && bundleFiles[name].required {
			p.add(name, 0, "missing required file")
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	b := &Bundle{
		frameworks: map[string]*Framework{},
		items:      map[string]Item{},
		links:      map[string]*Link{},
		forms:      map[string]Form{},
		benchmarks: map[benchKey]Benchmark{},
		norms:      map[benchKey]Norms{},
		growth:     map[growthKey]*GrowthModel{},
	}
	l := loader{p: &p, b: b, strands: map[string]map[string]bool{}, broken: map[string]bool{}}
	l.frameworks(tables["frameworks.csv"], tables["grades.csv"])
	l.strandList(tables["strands.csv"])
	l.itemBank(tables["items.csv"])
	l.linkTables(tables["links.csv"], tables["link_points.csv"])
	l.benchmarkTable(tables["benchmarks.csv"])
	l.formTable(tables["forms.csv"])
	l.normsTable(tables["norms.csv"])
	l.growthNormsTable(tables["growth_norms.csv"])
	if err := p.err(); err != nil {
		return nil, err
	}
	b.indexBanks()
	b.indexCatalog()
	b.indexPrograms()
	b.indexOffers()
	return b, nil
}

func knownFiles() []string {
	names := make([]string, 0, len(bundleFiles))
	for n := range bundleFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type loader struct {
	p       *problems
	b       *Bundle
	strands map[string]map[string]bool // declared strands per framework
	fwLine  map[string]row
	broken  map[string]bool // frameworks with a column that did not parse (already reported)
}

// framework returns the framework a row names, reporting an unknown one.
func (l *loader) framework(r row, col string) (*Framework, bool) {
	name := r.fields[col]
	f, ok := l.b.frameworks[name]
	if !ok {
		l.p.at(r, "unknown framework %q", name)
	}
	return f, ok
}

func (l *loader) frameworks(rows, grades []row) {
	l.fwLine = map[string]row{}
	for _, r := range rows {
		name, ok := l.p.text(r, "name")
		if !ok {
			continue
		}
		if first, dup := l.fwLine[name]; dup {
			l.p.at(r, "duplicate framework %q (first at line %d)", name, first.line)
			continue
		}
		if name != strings.ToLower(name) {
			// Requests name frameworks in any case and answers in lower case.
			l.p.at(r, "framework name %q is not lower case", name)
		}
		l.fwLine[name] = r
		f := &Framework{Name: name, Label: r.fields["label"], NegativePrefix: r.fields["negative_prefix"],
			Subject: r.fields["subject"], GradeMax: make([]float64, Grades), Norm: make([]float64, Grades)}
		parsed := l.subject(r, f)
		if v := r.fields["id_prefixes"]; v != "" {
			f.IDPrefixes = strings.Split(v, ";")
			if slices.Contains(f.IDPrefixes, "") {
				l.p.at(r, "id_prefixes %q holds an empty prefix (prefixes are separated by ;)", v)
				parsed = false
			}
		}
		for _, c := range []struct {
			col string
			dst *float64
		}{
			{"units_per_logit", &f.UnitsPerLogit}, {"success_at_match", &f.SuccessAtMatch},
			{"display_min", &f.DisplayMin}, {"display_max", &f.DisplayMax},
			{"growth_sd", &f.GrowthSD}, {"population_sd", &f.PopulationSD},
			{"extreme_adjust", &f.ExtremeAdjust}, {"strand_spread", &f.StrandSpread},
		} {
			var ok bool
			*c.dst, ok = l.p.number(r, c.col)
			parsed = parsed && ok
		}
		if !parsed {
			l.broken[name] = true
		}
		l.b.frameworks[name] = f
		l.b.order = append(l.b.order, name)
		l.strands[name] = map[string]bool{}
	}
	seen := map[benchKey]row{}
	for _, r := range grades {
		f, ok := l.framework(r, "framework")
		g, gok := l.p.grade(r, "grade")
		norm, nok := l.p.number(r, "norm")
		top, tok := l.p.number(r, "display_max")
		if !ok || !gok || !nok || !tok {
			continue
		}
		k := benchKey{framework: f.Name, grade: g}
		if first, dup := seen[k]; dup {
			l.p.at(r, "duplicate %s grade %d (first at line %d)", f.Name, g, first.line)
			continue
		}
		seen[k] = r
		f.Norm[g], f.GradeMax[g] = norm, top
	}
	if len(rows) == 0 {
		l.p.add("frameworks.csv", 0, "no framework; a bundle has at least one")
	}
	for _, name := range sortedKeys(l.b.frameworks) {
		f := l.b.frameworks[name]
		if !l.normCurve(f, seen) || l.broken[name] {
			continue
		}
		if err := f.Prepare(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") { // each problem at its line
				l.p.at(l.fwLine[name], "%s", line)
			}
		}
	}
}

func (l *loader) strandList(rows []row) {
	first := map[[2]string]int{}
	for _, r := range rows {
		f, ok := l.framework(r, "framework")
		name, nok := l.p.text(r, "strand")
		if !ok || !nok {
			continue
		}
		k := [2]string{f.Name, name}
		if line, dup := first[k]; dup {
			l.p.at(r, "duplicate strand %q of %s (first at line %d)", name, f.Name, line)
			continue
		}
		first[k] = r.line
		f.StrandNames = append(f.StrandNames, name)
		l.strands[f.Name][name] = true
	}
}

func (l *loader) itemBank(rows []row) {
	first := map[string]int{}
	for _, r := range rows {
		id, idok := l.p.text(r, "id")
		f, fok := l.framework(r, "framework")
		d, dok := l.p.number(r, "difficulty")
		strand := r.fields["strand"]
		if fok && !l.strands[f.Name][strand] {
			l.p.at(r, "strand %q is not declared for %s in strands.csv", strand, f.Name)
			fok = false
		}
		steps, sok := l.steps(r, d, dok)
		program, pok := l.program(r)
		if !idok || !fok || !dok || !sok || !pok {
			continue
		}
		if line, dup := first[id]; dup {
			l.p.at(r, "duplicate item id %q (first at line %d)", id, line)
			continue
		}
		first[id] = r.line
		l.b.items[id] = Item{ID: id, Framework: f.Name, Strand: strand, Difficulty: d, Steps: steps, Program: program}
	}
}

// maxLocationGap is how far an item's difficulty may be from the mean of its steps (units): the
// difficulty is the location shown for a polytomous item, so it must be that mean, rounded.
const maxLocationGap = 0.5

// steps reads the optional steps column of an items.csv row (`410;520;655`): nil when empty or
// absent (a dichotomous item), else the step difficulties of a polytomous item, whose difficulty
// d (checked when dok) must be their mean within maxLocationGap. A single step is the
// dichotomous item of that difficulty: it must equal d and gives nil.
func (l *loader) steps(r row, d float64, dok bool) ([]float64, bool) {
	v := r.fields["steps"]
	if v == "" {
		return nil, true
	}
	parts := strings.Split(v, ";")
	steps := make([]float64, len(parts))
	ok := true
	for k, part := range parts {
		part = strings.TrimSpace(part)
		x, err := strconv.ParseFloat(part, 64)
		switch {
		case err != nil:
			l.p.at(r, "steps: step %d %q is not a number (steps are numbers separated by ;)", k+1, part)
			ok = false
		case math.IsNaN(x) || math.IsInf(x, 0):
			l.p.at(r, "steps: step %d %q is not a finite number", k+1, part)
			ok = false
		}
		steps[k] = x
	}
	if !ok || !dok {
		return nil, ok
	}
	if len(steps) == 1 {
		if steps[0] != d {
			l.p.at(r, "steps: a single step %v differs from difficulty %v (one step is a dichotomous item of that difficulty)", steps[0], d)
			return nil, false
		}
		return nil, true
	}
	sum := 0.0
	for _, x := range steps {
		sum += x
	}
	if mean := sum / float64(len(steps)); !(math.Abs(d-mean) <= maxLocationGap) {
		l.p.at(r, "difficulty %v is not the mean of the steps (%v) within %v", d, mean, maxLocationGap)
		return nil, false
	}
	return steps, true
}

func (l *loader) linkTables(links, points []row) {
	lines := map[string]row{}
	for _, r := range links {
		id, idok := l.p.text(r, "id")
		f, fok := l.framework(r, "framework")
		if !idok || !fok {
			continue
		}
		if first, dup := lines[id]; dup {
			l.p.at(r, "duplicate link id %q (first at line %d)", id, first.line)
			continue
		}
		e, eok := l.p.number(r, "linking_error")
		if eok && e < 0 {
			l.p.at(r, "linking_error %v is negative", e)
			eok = false
		}
		program, pok := l.program(r)
		link := &Link{ID: id, Framework: f.Name, Kind: r.fields["kind"], LinkingError: e, Program: program}
		ok := eok && pok
		switch link.Kind {
		case LinkLinear:
			var a, b, c, d bool
			link.Slope, a = l.p.number(r, "slope")
			link.Intercept, b = l.p.number(r, "intercept")
			link.Min, c = l.p.number(r, "min")
			link.Max, d = l.p.number(r, "max")
			ok = ok && a && b && c && d
			if a && link.Slope <= 0 {
				l.p.at(r, "slope %v is not positive; a link must increase", link.Slope)
				ok = false
			}
			if c && d && link.Min >= link.Max {
				l.p.at(r, "min %v is not below max %v", link.Min, link.Max)
				ok = false
			}
		case LinkPoints:
			for _, col := range []string{"slope", "intercept", "min", "max"} {
				if r.fields[col] != "" {
					l.p.at(r, "%s must be empty for a point table (its points are in link_points.csv)", col)
					ok = false
				}
			}
		default:
			l.p.at(r, "kind %q is not %q or %q", link.Kind, LinkLinear, LinkPoints)
			ok = false
		}
		lines[id] = r
		if ok {
			l.b.links[id] = link
		}
	}
	for _, r := range points {
		id := r.fields["link"]
		s, sok := l.p.number(r, "scale_score")
		m, mok := l.p.number(r, "measure")
		if _, declared := lines[id]; !declared {
			l.p.at(r, "unknown link %q (declare it in links.csv)", id)
			continue
		}
		link, ok := l.b.links[id]
		if !ok || !sok || !mok {
			continue
		}
		if link.Kind != LinkPoints {
			l.p.at(r, "link %q is %s, not a point table", id, link.Kind)
			continue
		}
		if n := len(link.Points); n > 0 {
			last := link.Points[n-1]
			if s <= last.Score || m <= last.Measure {
				l.p.at(r, "point (%v, %v) does not follow (%v, %v): scale scores and measures must both increase",
					s, m, last.Score, last.Measure)
				continue
			}
		}
		link.Points = append(link.Points, LinkPoint{Score: s, Measure: m})
	}
	for _, id := range sortedKeys(l.b.links) {
		link := l.b.links[id]
		if link.Kind != LinkPoints {
			continue
		}
		if len(link.Points) < 2 {
			l.p.at(lines[id], "point table %q has %d points in link_points.csv; want at least 2", id, len(link.Points))
			continue
		}
		link.Min, link.Max = link.Points[0].Score, link.Points[len(link.Points)-1].Score
	}
}

func (l *loader) benchmarkTable(rows []row) {
	seen := map[benchKey]int{}
	for _, r := range rows {
		f, fok := l.framework(r, "framework")
		g, gok := l.p.grade(r, "grade")
		tod, tok := l.p.timeOfYear(r)
		lo, lok := l.p.number(r, "lower")
		hi, hok := l.p.number(r, "upper")
		if !fok || !gok || !tok || !lok || !hok {
			continue
		}
		if lo > hi {
			l.p.at(r, "lower %v is above upper %v", lo, hi)
			continue
		}
		k := benchKey{f.Name, g, tod}
		if line, dup := seen[k]; dup {
			l.p.at(r, "duplicate benchmark %s grade %d %s (first at line %d)", f.Name, g, tod, line)
			continue
		}
		seen[k] = r.line
		l.b.benchmarks[k] = Benchmark{Lower: lo, Upper: hi}
	}
	has := map[string]bool{}
	for k := range seen {
		has[k.framework] = true
	}
	for _, name := range sortedKeys(l.b.frameworks) {
		if !has[name] {
			continue // no strand benchmarks: the strand paths answer 400 for this framework
		}
		for g := 0; g < Grades; g++ {
			for _, tod := range timesOfYear {
				if _, ok := seen[benchKey{name, g, tod}]; !ok {
					l.p.add("benchmarks.csv", 0, "%s grade %d %s missing (a framework has every grade and time of year or none)", name, g, tod)
				}
			}
		}
	}
}

func (l *loader) formTable(rows []row) {
	type formAt struct {
		form Form
		line int
		has  map[string]bool
	}
	forms := map[string]*formAt{}
	var order []string
	for _, r := range rows {
		id, idok := l.p.text(r, "form")
		f, fok := l.framework(r, "framework")
		itemID := r.fields["item"]
		item, iok := l.b.items[itemID]
		if !iok {
			l.p.at(r, "unknown item %q", itemID)
		}
		program, pok := l.program(r)
		if !idok || !fok || !iok || !pok {
			continue
		}
		fa := forms[id]
		if fa == nil {
			fa = &formAt{form: Form{ID: id, Framework: f.Name, Program: program}, line: r.line, has: map[string]bool{}}
			forms[id] = fa
			order = append(order, id)
		}
		switch {
		case f.Name != fa.form.Framework:
			l.p.at(r, "form %q is %s (line %d), not %s", id, fa.form.Framework, fa.line, f.Name)
		case program != fa.form.Program:
			l.p.at(r, "form %q is of %s (line %d), not %s", id, programName(fa.form.Program), fa.line, programName(program))
		case item.Program != "" && item.Program != program:
			// A form is seen by whoever sees its program: an item of another program in it would
			// show that program's content to them.
			l.p.at(r, "item %q is of %s; form %q of %s may hold only shared items and its own program's", itemID,
				programName(item.Program), id, programName(program))
		case item.Framework != f.Name:
			l.p.at(r, "item %q is %s, not %s like form %q", itemID, item.Framework, f.Name, id)
		case fa.has[itemID]:
			l.p.at(r, "item %q appears twice in form %q", itemID, id)
		default:
			fa.has[itemID] = true
			fa.form.Items = append(fa.form.Items, itemID)
		}
	}
	for _, id := range order {
		l.b.forms[id] = forms[id].form
	}
}

// normsTable reads norms.csv: the rows of one table (framework, grade, time of year) in order of
// increasing percentile, each percentile in (0, 100), measures increasing too (a rank must be a
// function of the measure), at least 2 rows a table. Tables need not cover every grade.
func (l *loader) normsTable(rows []row) {
	first := map[benchKey]row{}
	var order []benchKey
	for _, r := range rows {
		f, fok := l.framework(r, "framework")
		g, gok := l.p.grade(r, "grade")
		tod, tok := l.p.timeOfYear(r)
		pc, pok := l.p.number(r, "percentile")
		if pok && !(pc > 0 && pc < 100) {
			l.p.at(r, "percentile %v is outside (0, 100)", pc)
			pok = false
		}
		m, mok := l.p.number(r, "measure")
		if !fok || !gok || !tok || !pok || !mok {
			continue
		}
		k := benchKey{f.Name, g, tod}
		if _, seen := first[k]; !seen {
			first[k] = r
			order = append(order, k)
		}
		n := l.b.norms[k]
		if last := len(n.Measures) - 1; last >= 0 && (pc <= n.Percentiles[last] || m <= n.Measures[last]) {
			l.p.at(r, "%s grade %d %s: point (%v, %v) does not follow (%v, %v): percentiles and measures must both increase",
				f.Name, g, tod, pc, m, n.Percentiles[last], n.Measures[last])
			continue
		}
		n.Percentiles = append(n.Percentiles, pc)
		n.Measures = append(n.Measures, m)
		l.b.norms[k] = n
	}
	for _, k := range order {
		if n := l.b.norms[k]; len(n.Measures) < 2 {
			l.p.at(first[k], "%s grade %d %s has %d row in norms.csv; want at least 2", k.framework, k.grade, k.time, len(n.Measures))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
