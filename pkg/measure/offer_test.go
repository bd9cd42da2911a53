package measure

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// dropRows removes every row of a file whose first field is framework.
func dropRows(m fstest.MapFS, file, framework string) {
	var keep []string
	for _, l := range strings.Split(string(m[file].Data), "\n") {
		if !strings.HasPrefix(l, framework+",") {
			keep = append(keep, l)
		}
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Join(keep, "\n"))}
}

// TestLoadOptionalParts: only frameworks.csv, strands.csv and items.csv are required; a
// framework's norm curve and benchmarks are all or nothing, and what it lacks shows in its offer.
func TestLoadOptionalParts(t *testing.T) {
	t.Parallel()
	m := demoFS()
	dropRows(m, "grades.csv", "quantile")
	dropRows(m, "benchmarks.csv", "quantile")
	dropRows(m, "norms.csv", "quantile")
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := b.Framework("quantile")
	if q.HasNormCurve() || b.HasBenchmarks("quantile") {
		t.Errorf("quantile: norm curve %v, benchmarks %v; want neither", q.HasNormCurve(), b.HasBenchmarks("quantile"))
	}
	if got := q.DisplayGrade(1700, 2); got != "1650Q" {
		t.Errorf("quantile grade 2 display of 1700 without grade caps: got %q; want %q (the framework's cap)", got, "1650Q")
	}
	if got := q.Expected(600, 365); got != 600 {
		t.Errorf("Expected without a norm curve: got %v; want 600 (no growth)", got)
	}
	if _, err := q.Plan(PlanRequest{Grade: 3, TimeOfYear: "MOY", Target: 900, Probability: 0.5}); err == nil {
		t.Error("Plan without a norm curve: got nil error")
	}
	offers := b.Offers()
	want := []string{
		"lexile (subject reading): 2020 items (20 partial credit), 5 strands, 3 forms, 2 links; norm curve, benchmarks, 39 norms tables",
		"quantile (subject math): 1520 items (20 partial credit), 5 strands, 3 forms, 2 links; no norm curve, no benchmarks, no norms",
	}
	for i, o := range offers {
		if o.String() != want[i] {
			t.Errorf("offer %d: got %q; want %q", i, o.String(), want[i])
		}
	}
	// Every optional file absent at once.
	for _, f := range []string{"grades.csv", "benchmarks.csv", "norms.csv", "links.csv", "link_points.csv", "forms.csv"} {
		delete(m, f)
	}
	if _, err := LoadFS(m); err != nil {
		t.Errorf("bundle of frameworks, strands and items only: %v", err)
	}
	m = fstest.MapFS{
		"frameworks.csv": {Data: []byte(strings.Join(append(frameworksHeader, frameworksOptional...), ",") + "\n")},
		"strands.csv":    {Data: []byte("framework,strand\n")},
		"items.csv":      {Data: []byte("id,framework,strand,difficulty\n")},
	}
	if _, err := LoadFS(m); err == nil || err.Error() != "frameworks.csv: no framework; a bundle has at least one" {
		t.Errorf("bundle without a framework: got %v; want the problem", err)
	}
}

// TestLoadSubjects: subjects and id prefixes come from frameworks.csv, each column optional.
func TestLoadSubjects(t *testing.T) {
	t.Parallel()
	b := Demo()
	if r, ok := b.Subject("reading"); !ok || r.Name != "lexile" {
		t.Errorf("reading: got %v; want lexile", r)
	}
	if m, ok := b.Subject("math"); !ok || m.Name != "quantile" {
		t.Errorf("math: got %v; want quantile", m)
	}
	if _, ok := b.Subject(""); ok {
		t.Error(`subject "": got a framework; want none`)
	}
	if got := b.IDPrefixes(); !slices.Equal(got, []string{"Q", "L", "S"}) {
		t.Errorf("id prefixes: got %v; want [Q L S] (row order)", got)
	}
	if got := b.FrameworkList(); got != "lexile or quantile" {
		t.Errorf("framework list: got %q; want %q", got, "lexile or quantile")
	}
	for _, c := range []struct{ header, row2, row3 string }{
		{"strand_spread", "", ""},
		{"strand_spread,subject", ",math", ",reading"},
		{"strand_spread,id_prefixes", ",Q", ",L;S"},
	} {
		m := demoFS()
		setLine(m, "frameworks.csv", 2, "name,label,negative_prefix,units_per_logit,success_at_match,display_min,display_max,growth_sd,population_sd,extreme_adjust,"+c.header)
		setLine(m, "frameworks.csv", 3, "quantile,Q,EM,180,0.5,-400,1650,75,300,0.3,100"+c.row2)
		setLine(m, "frameworks.csv", 4, "lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100"+c.row3)
		if _, err := LoadFS(m); err != nil {
			t.Errorf("header ending %s: %v", c.header, err)
		}
	}
	for _, c := range []struct{ name, row, want string }{
		{"bad subject", "lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100,science,L", `frameworks.csv:4: subject "science" is not "reading", "math" or empty`},
		{"two math", "lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100,math,L", `frameworks.csv:4: subject "math" is also framework "quantile"'s (line 3); a subject has at most one framework`},
		{"upper case name", "Lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100,reading,L", `frameworks.csv:4: framework name "Lexile" is not lower case`},
		{"empty prefix", "lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100,reading,L;", `frameworks.csv:4: id_prefixes "L;" holds an empty prefix (prefixes are separated by ;)`},
		{"columns out of order", "", `frameworks.csv:2: header "name,label,negative_prefix,units_per_logit,success_at_match,display_min,display_max,growth_sd,population_sd,extreme_adjust,strand_spread,id_prefixes,subject"; want "name,label,negative_prefix,units_per_logit,success_at_match,display_min,display_max,growth_sd,population_sd,extreme_adjust,strand_spread,subject,id_prefixes" (the last 2 optional)`},
	} {
		m := demoFS()
		if c.row != "" {
			setLine(m, "frameworks.csv", 4, c.row)
		} else {
			setLine(m, "frameworks.csv", 2, "name,label,negative_prefix,units_per_logit,success_at_match,display_min,display_max,growth_sd,population_sd,extreme_adjust,strand_spread,id_prefixes,subject")
		}
		_, err := LoadFS(m)
		if err == nil || !slices.Contains(strings.Split(err.Error(), "\n"), c.want) {
			t.Errorf("%s: got %v; want a line %q", c.name, err, c.want)
		}
	}
}

// TestOffersCountedOnce: the loader and a program's view count the offers when they are built, so
// that answering the catalog's frameworks call does not walk the bank; what Offers returns is the
// caller's own copy.
func TestOffersCountedOnce(t *testing.T) {
	t.Parallel()
	b, err := LoadFS(withPrograms())
	if err != nil {
		t.Fatal(err)
	}
	view := b.View(Programs{})
	if view == b {
		t.Fatal("the shared-only view is the bundle itself; want a view of its own")
	}
	for name, bundle := range map[string]*Bundle{"loaded": b, "view": view} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if bundle.offers == nil {
				t.Fatal("got no offers counted at build; want them counted once")
			}
			if got, want := bundle.Offers(), bundle.countOffers(); !slices.Equal(got, want) {
				t.Errorf("got offers %v; want %v (counted now)", got, want)
			}
			got := bundle.Offers()
			got[0].Items = -1
			if bundle.Offers()[0].Items == -1 {
				t.Error("changing the returned offers changed the bundle's")
			}
		})
	}
}
