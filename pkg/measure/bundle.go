package measure

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Item is one item of the bank. Difficulty is in measure units.
type Item struct {
	ID, Framework, Strand string
	Difficulty            float64
	Steps                 []float64 // step difficulties (measure units) of a polytomous item; nil for a dichotomous one
	Program               string    // the program that owns it; "" for shared content
}

// MaxScore is the item's highest score: len(Steps) for a polytomous item (scored 0 … len(Steps)
// by a rubric, whose Difficulty is its location, the mean of its steps), 1 for a dichotomous one.
func (it Item) MaxScore() int {
	if len(it.Steps) > 0 {
		return len(it.Steps)
	}
	return 1
}

// Polytomous reports whether the item is scored in more than two categories (two or more steps).
func (it Item) Polytomous() bool { return len(it.Steps) >= 2 }

// Form is a fixed test form: its items in order.
type Form struct {
	ID, Framework string
	Items         []string
	Program       string // the program that owns it; "" for shared content
}

// Benchmark is a strand benchmark (§6): the lower and upper measure of category 2.
type Benchmark struct{ Lower, Upper float64 }

// Times of year for benchmarks.
var timesOfYear = []string{"BOY", "MOY", "EOY"}

// TimeOfYear is the time of year s names, matched without regard to case as framework names are
// ("moy" is MOY), in its upper-case form; ok is false for anything but BOY, MOY and EOY.
func TimeOfYear(s string) (canonical string, ok bool) {
	for _, t := range timesOfYear {
		if strings.EqualFold(s, t) {
			return t, true
		}
	}
	return "", false
}

// Bundle is a complete, validated content bundle: frameworks, item bank, link tables, forms and
// strand benchmarks, and norms where the bundle has them. It is immutable and safe for concurrent use.
type Bundle struct {
	frameworks map[string]*Framework
	order      []string // framework names in the order of frameworks.csv's rows
	items      map[string]Item
	links      map[string]*Link
	forms      map[string]Form
	benchmarks map[benchKey]Benchmark
	norms      map[benchKey]Norms
	growth     map[growthKey]*GrowthModel // growth norms (§15), growthnorms_load.go
	banks      map[string]*Bank           // adaptive-testing index per framework (adaptive_index.go)
	catalog    []Item                     // every item in id byte order, for the content catalog (catalog.go)
	offers     []Offer                    // per framework, counted once (offer.go)
	programs   []string                   // the programs that own content, sorted (program.go)
	views      *viewCache                 // the bundle as each set of programs sees it (program.go)
	hash       string                     // 12 hex digits of its files' fingerprint, set by Live
}

// Hash names the files the bundle was loaded from (Live.Version), or is "" for a bundle loaded
// apart from a Live. A request that took the bundle reads its hash from it, so an answer never
// names another bundle than the one that answered it, whatever reload happens meanwhile.
func (b *Bundle) Hash() string { return b.hash }

type benchKey struct {
	framework string
	grade     int
	time      string
}

// Framework returns the named framework. Treat it as read-only.
func (b *Bundle) Framework(name string) (*Framework, bool) {
	f, ok := b.frameworks[name]
	return f, ok
}

// Item returns the bank item with this id. Its Steps are the bundle's own: treat them as
// read-only.
func (b *Bundle) Item(id string) (Item, bool) {
	it, ok := b.items[id]
	return it, ok
}

// Link returns the link table with this id. Treat it as read-only.
func (b *Bundle) Link(id string) (*Link, bool) {
	l, ok := b.links[id]
	return l, ok
}

// Form returns the form with this id (its item list is a copy).
func (b *Bundle) Form(id string) (Form, bool) {
	f, ok := b.forms[id]
	f.Items = slices.Clone(f.Items)
	return f, ok
}

// Benchmark returns the strand benchmark for a framework, grade (0..12) and time of year
// (BOY, MOY or EOY).
func (b *Bundle) Benchmark(framework string, grade int, timeOfYear string) (Benchmark, bool) {
	bm, ok := b.benchmarks[benchKey{framework, grade, timeOfYear}]
	return bm, ok
}

// BundleStats counts a bundle's content for start-up logs.
type BundleStats struct {
	Frameworks []string       // names, sorted
	Items      map[string]int // items per framework
	Strands    map[string]int // declared strands per framework
	Links      int
	Forms      int
}

// Stats counts the bundle's content.
func (b *Bundle) Stats() BundleStats {
	s := BundleStats{Items: map[string]int{}, Strands: map[string]int{}, Links: len(b.links), Forms: len(b.forms)}
	for name, f := range b.frameworks {
		s.Frameworks = append(s.Frameworks, name)
		s.Strands[name] = len(f.StrandNames)
		s.Items[name] = 0
	}
	sort.Strings(s.Frameworks)
	for _, it := range b.items {
		s.Items[it.Framework]++
	}
	return s
}

// String is a one-line summary, e.g. "read: 2000 items, 5 strands; math: …; 4 links, 4 forms".
func (s BundleStats) String() string {
	var sb strings.Builder
	for _, name := range s.Frameworks {
		fmt.Fprintf(&sb, "%s: %d items, %d strands; ", name, s.Items[name], s.Strands[name])
	}
	fmt.Fprintf(&sb, "%d links, %d forms", s.Links, s.Forms)
	return sb.String()
}
