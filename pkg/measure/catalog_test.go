package measure

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestCatalogItemsPages: paging through the bank with every page size from 1 up gives each
// selected item exactly once, in id byte order, and More is false exactly on the last page.
func TestCatalogItemsPages(t *testing.T) {
	t.Parallel()
	b := Demo()
	var want []string
	for id, it := range b.items {
		if it.Framework == "quantile" {
			want = append(want, id)
		}
	}
	sort.Strings(want)
	for _, limit := range []int{1, 7, 500, len(want) - 1, len(want), len(want) + 1} {
		var got []string
		after, pages := "", 0
		for {
			page := b.Items(ItemQuery{Framework: "quantile", After: after, Limit: limit})
			pages++
			if len(page.Items) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Items))
			}
			for _, it := range page.Items {
				got = append(got, it.ID)
			}
			if !page.More {
				break
			}
			if len(page.Items) != limit {
				t.Fatalf("limit %d: a page of %d with more to follow; want full pages before the last", limit, len(page.Items))
			}
			after = page.Items[len(page.Items)-1].ID
			if pages > len(want)+1 {
				t.Fatalf("limit %d: no end after %d pages", limit, pages)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: got %d ids (first %v); want the %d quantile ids in order", limit, len(got), got[:min(3, len(got))], len(want))
		}
	}
}

func TestCatalogItemsFilters(t *testing.T) {
	t.Parallel()
	b := Demo()
	strands, ok := b.Strands("lexile")
	if !ok || len(strands) == 0 {
		t.Fatalf("lexile strands: %v %v", strands, ok)
	}
	strand := strands[0]
	page := b.Items(ItemQuery{Framework: "lexile", Strand: strand, Limit: 5000})
	if len(page.Items) == 0 || page.More {
		t.Fatalf("strand %s: %d items, more %v", strand, len(page.Items), page.More)
	}
	for _, it := range page.Items {
		if it.Strand != strand || it.Framework != "lexile" {
			t.Errorf("strand filter let through %+v", it)
		}
	}
	// ids: only those asked, of the framework asked, in id order whatever the order asked.
	first, _ := b.Item(page.Items[0].ID)
	page = b.Items(ItemQuery{Framework: "lexile", IDs: []string{"Q000001", page.Items[1].ID, "NOPE", first.ID}, Limit: 10})
	if len(page.Items) != 2 || page.Items[0].ID != first.ID {
		t.Errorf("ids filter: got %+v; want the two lexile ids asked, in order", page.Items)
	}
	if got := b.Items(ItemQuery{Framework: "klingon", Limit: 10}); len(got.Items) != 0 || got.More {
		t.Errorf("unknown framework: got %+v; want nothing", got)
	}
	if got := b.Items(ItemQuery{Framework: "lexile", After: "\xff", Limit: 10}); len(got.Items) != 0 || got.More {
		t.Errorf("after the last id: got %d items; want none", len(got.Items))
	}
}

// TestCatalogItemsAreCopies: changing what the catalog answered does not change the bundle.
func TestCatalogItemsAreCopies(t *testing.T) {
	t.Parallel()
	b := Demo()
	var poly Item
	for _, it := range b.Items(ItemQuery{Framework: "lexile", Limit: 5000}).Items {
		if len(it.Steps) >= 2 {
			poly = it
			break
		}
	}
	if poly.ID == "" {
		t.Fatal("the demonstration bundle has no lexile item with steps; want some (METHOD §13)")
	}
	before := slices.Clone(poly.Steps)
	poly.Steps[0] = 99999
	again, _ := b.Item(poly.ID)
	if !slices.Equal(again.Steps, before) {
		t.Errorf("the bundle's steps changed to %v; want %v", again.Steps, before)
	}
}

func TestCatalogFormsLinksStrands(t *testing.T) {
	t.Parallel()
	b := Demo()
	all := b.Forms("")
	if len(all) != len(b.forms) {
		t.Fatalf("got %d forms; want %d", len(all), len(b.forms))
	}
	if !slices.IsSortedFunc(all, func(a, c Form) int { return strings.Compare(a.ID, c.ID) }) {
		t.Error("forms not in id order")
	}
	for _, fw := range []string{"lexile", "quantile"} {
		for _, f := range b.Forms(fw) {
			if f.Framework != fw {
				t.Errorf("Forms(%s) gave %s of %s", fw, f.ID, f.Framework)
			}
		}
	}
	all[0].Items[0] = "CHANGED"
	if f, _ := b.Form(all[0].ID); f.Items[0] == "CHANGED" {
		t.Error("a form's items alias the bundle's")
	}
	links := b.Links()
	if len(links) != len(b.links) || !slices.IsSortedFunc(links, func(a, c *Link) int { return strings.Compare(a.ID, c.ID) }) {
		t.Errorf("links: got %d, sorted %v; want %d in id order", len(links), slices.IsSortedFunc(links, func(a, c *Link) int { return strings.Compare(a.ID, c.ID) }), len(b.links))
	}
	if _, ok := b.Strands("klingon"); ok {
		t.Error("Strands of an unknown framework: ok")
	}
}
