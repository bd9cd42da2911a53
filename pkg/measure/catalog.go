package measure

import (
	"slices"
	"sort"
	"strings"
)

// indexCatalog puts the bank's items in id byte order once, when the bundle is loaded: a catalog
// page is then a binary search and a walk, not a sort of the whole bank per request.
func (b *Bundle) indexCatalog() {
	b.catalog = make([]Item, 0, len(b.items))
	for _, it := range b.items {
		b.catalog = append(b.catalog, it)
	}
	slices.SortFunc(b.catalog, func(a, c Item) int { return strings.Compare(a.ID, c.ID) })
}

// ItemQuery selects a page of the bank for the content catalog. Framework is required; Strand
// and IDs narrow it (empty: every strand, every id). After is the last id of the previous page
// ("" for the first); Limit ≥ 1 is the page size.
type ItemQuery struct {
	Framework, Strand string
	IDs               []string
	After             string
	Limit             int
	// MaxScore keeps the items of exactly this maximum score (0: any); PartialCredit, when set,
	// those scored in more than two categories (true) or right or wrong (false).
	MaxScore      int
	PartialCredit *bool
}

// keeps reports whether it passes q's filters of scoring.
func (q ItemQuery) keeps(it Item) bool {
	return (q.MaxScore == 0 || it.MaxScore() == q.MaxScore) && (q.PartialCredit == nil || it.Polytomous() == *q.PartialCredit)
}

// ItemPage is one page of the catalog: its items in id byte order, and whether more follow.
type ItemPage struct {
	Items []Item
	More  bool
}

// Items answers the content catalog's item query from the bundle: items of the framework (and
// strand, among IDs, of the maximum score and the kind of scoring when given) whose id is after After, in id byte order, at most Limit.
// Each item is a copy (its Steps too), so a caller cannot change the bundle.
func (b *Bundle) Items(q ItemQuery) ItemPage {
	var wanted map[string]bool
	if len(q.IDs) > 0 {
		wanted = make(map[string]bool, len(q.IDs))
		for _, id := range q.IDs {
			wanted[id] = true
		}
	}
	all := b.catalog
	start := sort.Search(len(all), func(i int) bool { return all[i].ID > q.After })
	var page ItemPage
	for _, it := range all[start:] {
		if it.Framework != q.Framework || (q.Strand != "" && it.Strand != q.Strand) || (wanted != nil && !wanted[it.ID]) || !q.keeps(it) {
			continue
		}
		if len(page.Items) == q.Limit {
			page.More = true
			break
		}
		it.Steps = slices.Clone(it.Steps)
		page.Items = append(page.Items, it)
	}
	return page
}

// Forms are the bundle's forms of framework ("" for every framework), in id byte order, each
// with a copy of its item list.
func (b *Bundle) Forms(framework string) []Form {
	var out []Form
	for _, f := range b.forms {
		if framework == "" || f.Framework == framework {
			f.Items = slices.Clone(f.Items)
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, c Form) int { return strings.Compare(a.ID, c.ID) })
	return out
}

// Links are the bundle's link tables in id byte order. Treat them as read-only.
func (b *Bundle) Links() []*Link {
	out := make([]*Link, 0, len(b.links))
	for _, l := range b.links {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, c *Link) int { return strings.Compare(a.ID, c.ID) })
	return out
}

// Strands are the framework's declared strand names, in byte order; false when the bundle has no
// such framework.
func (b *Bundle) Strands(framework string) ([]string, bool) {
	f, ok := b.frameworks[framework]
	if !ok {
		return nil, false
	}
	out := slices.Clone(f.StrandNames)
	slices.Sort(out)
	return out, true
}
