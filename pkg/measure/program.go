package measure

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A program is one partner's own content on a shared deployment: items, forms and links whose
// `program` column names it are seen only by clients given that program; an empty column is
// shared content, seen by every client. A client's view of a bundle is the bundle without
// every other program's content (View), so that whatever a request asks, hidden content is
// answered exactly as content that never existed.

// programPattern is what a program name may be: it is written in bundle files and clients files
// alike, so it stays plain (the clients file's loader holds the same rule).
var programPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidProgram reports whether name may name a program: 1 to 64 of a-z 0-9 . _ - starting with a
// letter or digit.
func ValidProgram(name string) bool { return programPattern.MatchString(name) }

// programName names a program in a message, shared content included.
func programName(p string) string {
	if p == "" {
		return "shared content"
	}
	return "program " + p
}

// program reads the optional program column of a row: "" (shared) or a valid program name.
func (l *loader) program(r row) (string, bool) {
	v := r.fields["program"]
	if v == "" || ValidProgram(v) {
		return v, true
	}
	l.p.at(r, "program %q must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit (empty: shared content)", v)
	return "", false
}

// indexPrograms lists the programs that own content, once the bundle is loaded.
func (b *Bundle) indexPrograms() {
	seen := map[string]bool{}
	for _, it := range b.items {
		seen[it.Program] = true
	}
	for _, f := range b.forms {
		seen[f.Program] = true
	}
	for _, l := range b.links {
		seen[l.Program] = true
	}
	delete(seen, "")
	b.programs = sortedKeys(seen)
	b.views = &viewCache{views: map[string]*viewEntry{}}
}

// Programs are the programs that own content in the bundle, sorted.
func (b *Bundle) Programs() []string { return slices.Clone(b.programs) }

// Programs is the set of programs a client sees besides shared content. The zero value sees
// shared content only.
type Programs struct {
	all   bool
	names []string // sorted, distinct
}

// AllPrograms sees every program: an operator's own client.
func AllPrograms() Programs { return Programs{all: true} }

// ProgramSet is the set of the names; "*" among them is every program.
func ProgramSet(names ...string) Programs {
	if slices.Contains(names, "*") {
		return AllPrograms()
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return Programs{names: slices.Compact(s)}
}

// Sees reports whether the set sees content of program p ("" is shared content, seen by all).
func (s Programs) Sees(p string) bool {
	if p == "" || s.all {
		return true
	}
	_, found := slices.BinarySearch(s.names, p)
	return found
}

// Key is the set in a canonical form: "*" for every program, else the names joined by ",".
func (s Programs) Key() string {
	if s.all {
		return "*"
	}
	return strings.Join(s.names, ",")
}

// maxViews bounds a bundle's cache of views: the distinct program sets of a clients file are few,
// and when a file churns through more the cache starts over instead of growing.
const maxViews = 256

// viewCache holds the bundle as each set of its programs sees it.
type viewCache struct {
	mu    sync.Mutex
	views map[string]*viewEntry // by the key of the seen programs of the bundle
}

// viewEntry is one view, built once: the requests that want it while it is built wait for that
// build instead of making their own (after a reload every client's first request arrives at once,
// and a view of the demo bank costs about 16 ms and 2 MB).
type viewEntry struct {
	once sync.Once
	v    *Bundle
}

// View is the bundle as a client seeing the programs s sees it: every item, form and link of
// another program left out, and everything computed from them (the adaptive banks, the catalog,
// the offers) computed again without them. It is the bundle itself when s sees all its content;
// otherwise it is computed once per bundle and set of the bundle's programs, and then a map look-up.
func (b *Bundle) View(s Programs) *Bundle {
	if b.views == nil { // a bundle not made by the loader holds no programs
		return b
	}
	seen := make([]string, 0, len(b.programs))
	for _, p := range b.programs {
		if s.Sees(p) {
			seen = append(seen, p)
		}
	}
	if len(seen) == len(b.programs) {
		return b
	}
	key := strings.Join(seen, ",")
	b.views.mu.Lock()
	e, ok := b.views.views[key]
	if !ok {
		if len(b.views.views) >= maxViews {
			clear(b.views.views) // the entries being built still answer those waiting for them
		}
		e = &viewEntry{}
		b.views.views[key] = e
	}
	b.views.mu.Unlock()
	e.once.Do(func() { e.v = b.view(ProgramSet(seen...)) })
	return e.v
}

// view builds the bundle as s sees it. Frameworks, norms, growth norms and benchmarks belong to
// no program and are shared with b (read-only).
func (b *Bundle) view(s Programs) *Bundle {
	v := &Bundle{
		frameworks: b.frameworks,
		order:      b.order,
		items:      map[string]Item{},
		links:      map[string]*Link{},
		forms:      map[string]Form{},
		benchmarks: b.benchmarks,
		norms:      b.norms,
		growth:     b.growth,
		hash:       b.hash,
	}
	for id, it := range b.items {
		if s.Sees(it.Program) {
			v.items[id] = it
		}
	}
	for id, l := range b.links {
		if s.Sees(l.Program) {
			v.links[id] = l
		}
	}
	for id, f := range b.forms {
		if s.Sees(f.Program) {
			v.forms[id] = f
		}
	}
	v.indexBanks()
	v.indexCatalog()
	v.indexPrograms()
	v.indexOffers()
	return v
}
