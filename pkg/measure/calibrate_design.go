package measure

import (
	"fmt"
	"strconv"
	"strings"
)

// DesignError says why response data cannot be put on one scale: a booklet design whose item
// sets do not connect, or data that give no finite estimate (Fischer's condition). Components
// lists the item ids of each part, in column order.
type DesignError struct {
	Reason     string
	Components [][]string
}

func (e *DesignError) Error() string {
	parts := make([]string, len(e.Components))
	for i, c := range e.Components {
		parts[i] = fmt.Sprintf("{%s}", strings.Join(c, ", "))
	}
	return fmt.Sprintf("%s: %s", e.Reason, strings.Join(parts, "; "))
}

// design is the response matrix reduced to what CML can estimate: the items and persons that
// remain after items answered all alike and persons with zero or perfect scores are removed,
// repeatedly, until nothing changes (§10, Fischer's existence condition). A polytomous item also
// needs each of its categories observed (§13).
type design struct {
	resp       *Responses
	top        []int // highest score of each response column (nil: 1 for every item, the Rasch model)
	rsm        bool  // the rating scale model: top is the file's highest score for every item
	keepItem   []bool
	keepPerson []bool
	dropped    []DroppedItem
}

// topOf is the highest score of response column i.
func (d *design) topOf(i int) int {
	if d.top == nil {
		return 1
	}
	return d.top[i]
}

// prune removes, until stable, persons whose score on the kept items is zero or perfect (they
// carry no information about item differences) and items that the remaining persons answered
// all alike (their CML estimate is infinite). Every dropped item is named with its reason.
func prune(resp *Responses) *design { return pruneScores(resp, nil, false) }

// pruneScores is prune for items scored 0 … top[i] (nil: 0/1 items): a perfect score is the
// total of the tops of the items a person answered, and an item whose categories the remaining
// persons do not all use is dropped too (a step between categories of which one is empty has no
// finite estimate). rsm only changes the reasons' wording.
func pruneScores(resp *Responses, top []int, rsm bool) *design {
	nItems := len(resp.Items)
	d := &design{resp: resp, top: top, rsm: rsm, keepItem: make([]bool, nItems), keepPerson: make([]bool, len(resp.Cells))}
	rawCount := d.categoryCounts(nil)
	for i := range d.keepItem {
		d.keepItem[i] = true
		if total(rawCount[i]) == 0 {
			d.drop(i, "not answered by anyone")
		}
	}
	for p := range d.keepPerson {
		d.keepPerson[p] = true
	}
	for changed := true; changed; {
		changed = false
		for p, row := range resp.Cells {
			if !d.keepPerson[p] {
				continue
			}
			score, most := 0, 0
			for i, x := range row {
				if x != Missing && d.keepItem[i] {
					most += d.topOf(i)
					score += int(x)
				}
			}
			if score == 0 || score == most {
				d.keepPerson[p] = false
				changed = true
			}
		}
		count := d.categoryCounts(d.keepPerson)
		for i := range d.keepItem {
			if !d.keepItem[i] {
				continue
			}
			reason := d.noEstimate(i, rawCount[i], count[i])
			if reason == "" {
				continue
			}
			d.drop(i, reason)
			changed = true
		}
	}
	return d
}

// categoryCounts counts, per response column, the answers in each category 0 … top of the
// persons in keep (nil: every person).
func (d *design) categoryCounts(keep []bool) [][]int {
	count := make([][]int, len(d.resp.Items))
	for i := range count {
		count[i] = make([]int, d.topOf(i)+1)
	}
	for p, row := range d.resp.Cells {
		if keep != nil && !keep[p] {
			continue
		}
		for i, x := range row {
			if x != Missing {
				count[i][x]++
			}
		}
	}
	return count
}

func total(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// noEstimate says why item i has no finite estimate, from its category counts over every person
// (raw) and over the persons kept (count); "" if it has one.
func (d *design) noEstimate(i int, raw, count []int) string {
	rawN, n := total(raw), total(count)
	top := d.topOf(i)
	if top == 1 {
		rawRight, right := raw[1], count[1]
		switch {
		case rawRight == rawN:
			return fmt.Sprintf("answered correctly by all %d persons who took it", rawN)
		case rawRight == 0:
			return fmt.Sprintf("answered wrongly by all %d persons who took it", rawN)
		case n == 0:
			return "answered only by persons with zero or perfect scores"
		case right == n:
			return fmt.Sprintf("answered correctly by all %d persons who took it once those with zero or perfect scores are left out", n)
		case right == 0:
			return fmt.Sprintf("answered wrongly by all %d persons who took it once those with zero or perfect scores are left out", n)
		}
		return ""
	}
	needs := fmt.Sprintf("an item scored 0–%d needs every category observed", top)
	if d.rsm {
		needs = fmt.Sprintf("the rating scale model scores every item of the file 0–%d and needs every category observed", top)
	}
	if unseen := unobserved(raw); unseen != "" {
		return fmt.Sprintf("%s never observed in the %d persons who took it (%s)", unseen, rawN, needs)
	}
	if n == 0 {
		return "answered only by persons with zero or perfect scores"
	}
	if unseen := unobserved(count); unseen != "" {
		return fmt.Sprintf("%s not observed once those with zero or perfect scores are left out (%d persons; %s)", unseen, n, needs)
	}
	return ""
}

// unobserved names the categories with no answers: "score 2", "scores 0 and 3", "scores 1, 2 and 4".
func unobserved(counts []int) string {
	var none []string
	for c, n := range counts {
		if n == 0 {
			none = append(none, strconv.Itoa(c))
		}
	}
	switch len(none) {
	case 0:
		return ""
	case 1:
		return "score " + none[0]
	}
	return "scores " + strings.Join(none[:len(none)-1], ", ") + " and " + none[len(none)-1]
}

func (d *design) drop(i int, reason string) {
	d.keepItem[i] = false
	d.dropped = append(d.dropped, DroppedItem{ID: d.resp.Items[i], Reason: reason})
}

// check returns a *DesignError if the kept data cannot be put on one scale: first the booklet
// design (items linked by the persons who answered both), then Fischer's condition (the directed
// graph with an edge i → j whenever some person answered i right and j wrong must be strongly
// connected, else the difficulties of one part can move without bound against the rest). For
// items scored 0 … m, "right" is a score above 0 and "wrong" one below m: a person scoring
// between the two is both, and some person could trade a point of i for one of j.
func (d *design) check() error {
	kept := d.keptItems()
	index := make([]int, len(d.resp.Items))
	for k, i := range kept {
		index[i] = k
	}
	m := len(kept)
	// Booklet connectivity: union the items each person answered.
	parent := make([]int, m)
	for k := range parent {
		parent[k] = k
	}
	var find func(int) int
	find = func(k int) int {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	// Fischer: edges right → wrong, as an m × m adjacency matrix.
	edge := make([]bool, m*m)
	rights := make([]int, 0, m)
	wrongs := make([]int, 0, m)
	for p, row := range d.resp.Cells {
		if !d.keepPerson[p] {
			continue
		}
		rights, wrongs = rights[:0], wrongs[:0]
		for i, x := range row {
			if x == Missing || !d.keepItem[i] {
				continue
			}
			if x >= 1 {
				rights = append(rights, index[i])
			}
			if int(x) < d.topOf(i) {
				wrongs = append(wrongs, index[i])
			}
		}
		first := -1
		for _, k := range append(rights, wrongs...) {
			if first < 0 {
				first = k
			} else if a, b := find(first), find(k); a != b {
				parent[b] = a
			}
		}
		for _, a := range rights {
			e := edge[a*m : (a+1)*m]
			for _, b := range wrongs {
				e[b] = true
			}
		}
	}
	label := make([]int, m)
	for k := range label {
		label[k] = find(k)
	}
	if parts := d.components(kept, label); len(parts) > 1 {
		return &DesignError{
			Reason:     fmt.Sprintf("the booklet design does not connect: no person links these %d groups of items, so they cannot be put on one scale", len(parts)),
			Components: parts,
		}
	}
	if parts := d.components(kept, strongComponents(m, edge)); len(parts) > 1 {
		return &DesignError{
			Reason: fmt.Sprintf("the data give no finite difficulties (Fischer's condition): the items fall into %d groups, "+
				"and for some pair of groups nobody answered an item of the first right and one of the second wrong", len(parts)),
			Components: parts,
		}
	}
	return nil
}

func (d *design) keptItems() []int {
	var kept []int
	for i, k := range d.keepItem {
		if k {
			kept = append(kept, i)
		}
	}
	return kept
}

// components groups the kept items by label, groups in order of their first item.
func (d *design) components(kept, label []int) [][]string {
	at := map[int]int{}
	var parts [][]string
	for k, i := range kept {
		g, ok := at[label[k]]
		if !ok {
			g = len(parts)
			at[label[k]] = g
			parts = append(parts, nil)
		}
		parts[g] = append(parts[g], d.resp.Items[i])
	}
	return parts
}

// strongComponents labels the strongly connected components of the directed graph on m nodes
// with adjacency matrix edge (Tarjan's algorithm, iterative so that a long chain cannot exhaust
// the stack).
func strongComponents(m int, edge []bool) []int {
	const unvisited = -1
	index := make([]int, m)
	low := make([]int, m)
	onStack := make([]bool, m)
	label := make([]int, m)
	for k := range index {
		index[k] = unvisited
	}
	var stack []int
	type frame struct{ node, next int }
	var calls []frame
	counter := 0
	for root := 0; root < m; root++ {
		if index[root] != unvisited {
			continue
		}
		calls = append(calls, frame{root, 0})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.node
			descended := false
			for ; f.next < m; f.next++ {
				w := f.next
				if !edge[v*m+w] {
					continue
				}
				if index[w] == unvisited {
					f.next++
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
					descended = true
					break
				}
				if onStack[w] {
					low[v] = min(low[v], index[w])
				}
			}
			if descended {
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					label[w] = v
					if w == v {
						break
					}
				}
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].node
				low[u] = min(low[u], low[v])
			}
		}
	}
	return label
}
