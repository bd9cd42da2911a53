package measure

import (
	"fmt"
	"slices"
	"strings"
)

// Offer is what a bundle offers for one framework: its content and which of the optional parts
// (each of which some requests need) it has.
type Offer struct {
	Framework  string
	Subject    string // "reading", "math" or "" (no forecast paths)
	Items      int
	Polytomous int // items scored in more than two categories
	Strands    int
	Forms      int
	Links      int
	NormCurve  bool // grades.csv rows: growth over elapsed days, forecasts, plans, grade priors
	Benchmarks bool // benchmarks.csv rows: strand categories
	Norms      int  // norms.csv tables (grade × time of year): percentiles
}

// Parts names the optional parts the offer has and lacks, e.g. "norm curve, benchmarks, 39 norms
// tables" or "no norm curve, no benchmarks, no norms".
func (o Offer) Parts() string {
	var parts []string
	add := func(has bool, name string) {
		if has {
			parts = append(parts, name)
		} else {
			parts = append(parts, "no "+name)
		}
	}
	add(o.NormCurve, "norm curve")
	add(o.Benchmarks, "benchmarks")
	if o.Norms > 0 {
		parts = append(parts, fmt.Sprintf("%d norms tables", o.Norms))
	} else {
		parts = append(parts, "no norms")
	}
	return strings.Join(parts, ", ")
}

// String is a one-line summary of the offer for start-up logs and the content command.
func (o Offer) String() string {
	subject := "no forecast subject"
	if o.Subject != "" {
		subject = "subject " + o.Subject
	}
	return fmt.Sprintf("%s (%s): %d items (%d partial credit), %d strands, %d forms, %d links; %s",
		o.Framework, subject, o.Items, o.Polytomous, o.Strands, o.Forms, o.Links, o.Parts())
}

// Offers lists what the bundle offers per framework, by framework name. The loader and View
// count them once (indexOffers): counting walks every item, and the content catalog's
// frameworks call must not cost a bank's size per request.
func (b *Bundle) Offers() []Offer {
	if b.offers != nil {
		return slices.Clone(b.offers)
	}
	return b.countOffers()
}

func (b *Bundle) indexOffers() { b.offers = b.countOffers() }

func (b *Bundle) countOffers() []Offer {
	out := make([]Offer, 0, len(b.frameworks))
	for _, name := range b.FrameworkNames() {
		f := b.frameworks[name]
		o := Offer{Framework: name, Subject: f.Subject, Strands: len(f.StrandNames), NormCurve: f.HasNormCurve(),
			Benchmarks: b.HasBenchmarks(name)}
		for _, it := range b.items {
			if it.Framework == name {
				o.Items++
				if it.Polytomous() {
					o.Polytomous++
				}
			}
		}
		for _, fm := range b.forms {
			if fm.Framework == name {
				o.Forms++
			}
		}
		for _, l := range b.links {
			if l.Framework == name {
				o.Links++
			}
		}
		for k := range b.norms {
			if k.framework == name {
				o.Norms++
			}
		}
		out = append(out, o)
	}
	return out
}

// FrameworkNames are the bundle's frameworks by name.
func (b *Bundle) FrameworkNames() []string { return sortedKeys(b.frameworks) }

// FrameworkList names the frameworks for a message: "a", "a or b", "a, b or c".
func (b *Bundle) FrameworkList() string { return orList(b.FrameworkNames()) }

func orList(names []string) string {
	switch n := len(names); n {
	case 0:
		return "none"
	case 1:
		return names[0]
	default:
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
}

// Subject returns the framework whose forecast paths subject ("reading", "math") names.
func (b *Bundle) Subject(subject string) (*Framework, bool) {
	for _, f := range b.frameworks {
		if f.Subject == subject && subject != "" {
			return f, true
		}
	}
	return nil, false
}

// IDPrefixes are the id prefixes the item-ids Bayes path takes: every framework's id_prefixes,
// in the order of the frameworks.csv rows; none (any id of the bank) when no framework sets them.
func (b *Bundle) IDPrefixes() []string {
	var out []string
	for _, name := range b.order {
		for _, p := range b.frameworks[name].IDPrefixes {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// HasBenchmarks reports whether the bundle has strand benchmarks for the framework (a framework
// has every grade and time of year or none).
func (b *Bundle) HasBenchmarks(framework string) bool {
	_, ok := b.benchmarks[benchKey{framework, 0, "BOY"}]
	return ok
}
