package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// diff prints what replacing the bundle in oldDir by the one in newDir changes, each change once,
// and returns errFound when there is any.
func diff(oldDir, newDir string, w io.Writer) error {
	a, err := load(oldDir)
	if err != nil {
		return err
	}
	b, err := load(newDir)
	if err != nil {
		return err
	}
	var lines []string
	lines = append(lines, frameworkChanges(a, b)...)
	lines = append(lines, itemChanges(a, b)...)
	lines = append(lines, formChanges(a, b)...)
	lines = append(lines, linkChanges(a, b)...)
	if len(lines) == 0 {
		fmt.Fprintf(w, "%s and %s hold the same content\n", oldDir, newDir)
		return nil
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "%d changes\n", len(lines))
	return errFound
}

func load(dir string) (*measure.Bundle, error) {
	b, problems := measure.CheckDir(dir)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s does not load (yardstick-content check %s lists why): %s", dir, dir, problems[0])
	}
	return b, nil
}

func frameworkChanges(a, b *measure.Bundle) []string {
	var out []string
	for _, name := range union(a.FrameworkNames(), b.FrameworkNames()) {
		fa, inA := a.Framework(name)
		fb, inB := b.Framework(name)
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("framework %s added", name))
			continue
		case !inB:
			out = append(out, fmt.Sprintf("framework %s removed", name))
			continue
		}
		for _, c := range []struct {
			what     string
			old, new any
		}{
			{"label", fa.Label, fb.Label}, {"negative_prefix", fa.NegativePrefix, fb.NegativePrefix},
			{"subject", fa.Subject, fb.Subject}, {"id_prefixes", strings.Join(fa.IDPrefixes, ";"), strings.Join(fb.IDPrefixes, ";")},
			{"units_per_logit", fa.UnitsPerLogit, fb.UnitsPerLogit}, {"success_at_match", fa.SuccessAtMatch, fb.SuccessAtMatch},
			{"display_min", fa.DisplayMin, fb.DisplayMin}, {"display_max", fa.DisplayMax, fb.DisplayMax},
			{"growth_sd", fa.GrowthSD, fb.GrowthSD}, {"population_sd", fa.PopulationSD, fb.PopulationSD},
			{"extreme_adjust", fa.ExtremeAdjust, fb.ExtremeAdjust}, {"strand_spread", fa.StrandSpread, fb.StrandSpread},
			{"norm curve", curve(fa.Norm), curve(fb.Norm)}, {"grade caps", fmt.Sprint(fa.GradeMax), fmt.Sprint(fb.GradeMax)},
			{"strands", strings.Join(fa.StrandNames, "; "), strings.Join(fb.StrandNames, "; ")},
			{"strand benchmarks", a.HasBenchmarks(name), b.HasBenchmarks(name)},
			{"norms tables", offer(a, name).Norms, offer(b, name).Norms},
		} {
			if fmt.Sprint(c.old) != fmt.Sprint(c.new) {
				out = append(out, fmt.Sprintf("framework %s: %s %v -> %v", name, c.what, c.old, c.new))
			}
		}
	}
	return out
}

func curve(norm []float64) string {
	if len(norm) == 0 {
		return "none"
	}
	return fmt.Sprint(norm)
}

func offer(b *measure.Bundle, name string) measure.Offer {
	for _, o := range b.Offers() {
		if o.Framework == name {
			return o
		}
	}
	return measure.Offer{}
}

// itemChange is one item's change, with the size of its largest difficulty or step change.
type itemChange struct {
	line string
	size float64
}

// itemChanges lists items added and removed, then items changed — moved to another framework or
// strand, difficulty or steps changed, all of one item's changes on one line — the largest change
// in units first.
func itemChanges(a, b *measure.Bundle) []string {
	olds, news := items(a), items(b)
	var added, removed []string
	var changed []itemChange
	for _, id := range union(keys(olds), keys(news)) {
		o, inA := olds[id]
		n, inB := news[id]
		switch {
		case !inA:
			added = append(added, fmt.Sprintf("item %s added: %s, strand %q, %s%s", id, n.Framework, n.Strand, location(n), ofProgram(n.Program)))
			continue
		case !inB:
			removed = append(removed, fmt.Sprintf("item %s removed: %s, strand %q, %s%s", id, o.Framework, o.Strand, location(o), ofProgram(o.Program)))
			continue
		}
		var parts []string
		size := 0.0
		if o.Framework != n.Framework {
			parts = append(parts, fmt.Sprintf("framework %s -> %s", o.Framework, n.Framework))
		}
		if o.Strand != n.Strand {
			parts = append(parts, fmt.Sprintf("strand %q -> %q", o.Strand, n.Strand))
		}
		if o.Program != n.Program {
			// Who sees the item changes: as much a change as its difficulty.
			parts = append(parts, fmt.Sprintf("program %s -> %s", programName(o.Program), programName(n.Program)))
		}
		if d := n.Difficulty - o.Difficulty; d != 0 {
			parts = append(parts, fmt.Sprintf("difficulty %v -> %v (%+.2f units)", o.Difficulty, n.Difficulty, d))
			size = math.Abs(d)
		}
		if !slices.Equal(o.Steps, n.Steps) {
			parts = append(parts, fmt.Sprintf("steps %s -> %s%s", steps(o.Steps), steps(n.Steps), stepShift(o.Steps, n.Steps, &size)))
		}
		if len(parts) > 0 {
			changed = append(changed, itemChange{fmt.Sprintf("item %s changed: %s", id, strings.Join(parts, "; ")), size})
		}
	}
	sort.SliceStable(changed, func(i, j int) bool { return changed[i].size > changed[j].size })
	out := append(added, removed...)
	for _, c := range changed {
		out = append(out, c.line)
	}
	return out
}

func items(b *measure.Bundle) map[string]measure.Item {
	out := map[string]measure.Item{}
	for _, fw := range b.FrameworkNames() {
		for _, it := range b.Items(measure.ItemQuery{Framework: fw, Limit: math.MaxInt}).Items {
			out[it.ID] = it
		}
	}
	return out
}

func location(it measure.Item) string {
	if it.Polytomous() {
		return fmt.Sprintf("difficulty %v, steps %s", it.Difficulty, steps(it.Steps))
	}
	return fmt.Sprintf("difficulty %v", it.Difficulty)
}

func steps(s []float64) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ";")
}

// stepShift is the largest step change when both items have as many steps (and raises size to
// it); "" otherwise.
func stepShift(old, new []float64, size *float64) string {
	if len(old) != len(new) || len(old) == 0 {
		return ""
	}
	largest := 0.0
	for i := range old {
		if d := new[i] - old[i]; math.Abs(d) > math.Abs(largest) {
			largest = d
		}
	}
	*size = math.Max(*size, math.Abs(largest))
	return fmt.Sprintf(" (largest step change %+.2f units)", largest)
}

func formChanges(a, b *measure.Bundle) []string {
	index := func(b *measure.Bundle) map[string]measure.Form {
		out := map[string]measure.Form{}
		for _, f := range b.Forms("") {
			out[f.ID] = f
		}
		return out
	}
	olds, news := index(a), index(b)
	var out []string
	for _, id := range union(keys(olds), keys(news)) {
		o, inA := olds[id]
		n, inB := news[id]
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("form %s added: %s, %d items%s", id, n.Framework, len(n.Items), ofProgram(n.Program)))
		case !inB:
			out = append(out, fmt.Sprintf("form %s removed", id))
		case o.Framework != n.Framework || !slices.Equal(o.Items, n.Items):
			line := fmt.Sprintf("form %s changed: %s %s -> %s %s", id, o.Framework, strings.Join(o.Items, " "), n.Framework, strings.Join(n.Items, " "))
			if o.Program != n.Program {
				line += fmt.Sprintf("; program %s -> %s", programName(o.Program), programName(n.Program))
			}
			out = append(out, line)
		case o.Program != n.Program:
			out = append(out, fmt.Sprintf("form %s changed: program %s -> %s", id, programName(o.Program), programName(n.Program)))
		}
	}
	return out
}

func linkChanges(a, b *measure.Bundle) []string {
	index := func(b *measure.Bundle) map[string]string {
		out := map[string]string{}
		for _, l := range b.Links() {
			out[l.ID] = fmt.Sprintf("%s %s slope %v intercept %v range [%v, %v] linking error %v points %v%s",
				l.Framework, l.Kind, l.Slope, l.Intercept, l.Min, l.Max, l.LinkingError, l.Points, ofProgram(l.Program))
		}
		return out
	}
	olds, news := index(a), index(b)
	var out []string
	for _, id := range union(keys(olds), keys(news)) {
		o, inA := olds[id]
		n, inB := news[id]
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("link %s added: %s", id, n))
		case !inB:
			out = append(out, fmt.Sprintf("link %s removed", id))
		case o != n:
			out = append(out, fmt.Sprintf("link %s changed: %s -> %s", id, o, n))
		}
	}
	return out
}

// programName names an item's, form's or link's program in a change.
func programName(p string) string {
	if p == "" {
		return "shared"
	}
	return p
}

// ofProgram is ", program NAME" for content of a program, "" for shared content (as a bundle
// without programs always printed it).
func ofProgram(p string) string {
	if p == "" {
		return ""
	}
	return ", program " + p
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// union is the sorted names of both lists, once each.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
