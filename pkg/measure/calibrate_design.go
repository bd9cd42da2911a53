package measure

import (
	"fmt"
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
// repeatedly, until nothing changes (§10, Fischer's existence condition).
type design struct {
	resp       *Responses
	keepItem   []bool
	keepPerson []bool
	dropped    []DroppedItem
}

// prune removes, until stable, persons whose score on the kept items is zero or perfect (they
// carry no information about item differences) and items that the remaining persons answered
// all alike (their CML estimate is infinite). Every dropped item is named with its reason.
func prune(resp *Responses) *design {
	nItems := len(resp.Items)
	d := &design{resp: resp, keepItem: make([]bool, nItems), keepPerson: make([]bool, len(resp.Cells))}
	rawRight := make([]int, nItems)
	rawN := make([]int, nItems)
	for _, row := range resp.Cells {
		for i, x := range row {
			if x != Missing {
				rawN[i]++
				rawRight[i] += int(x)
			}
		}
	}
	for i := range d.keepItem {
		d.keepItem[i] = true
		if rawN[i] == 0 {
			d.drop(i, "not answered by anyone")
		}
	}
	for p := range d.keepPerson {
		d.keepPerson[p] = true
	}
	right := make([]int, nItems)
	n := make([]int, nItems)
	for changed := true; changed; {
		changed = false
		for p, row := range resp.Cells {
			if !d.keepPerson[p] {
				continue
			}
			score, answered := 0, 0
			for i, x := range row {
				if x != Missing && d.keepItem[i] {
					answered++
					score += int(x)
				}
			}
			if score == 0 || score == answered {
				d.keepPerson[p] = false
				changed = true
			}
		}
		clear(right)
		clear(n)
		for p, row := range resp.Cells {
			if !d.keepPerson[p] {
				continue
			}
			for i, x := range row {
				if x != Missing {
					n[i]++
					right[i] += int(x)
				}
			}
		}
		for i := range d.keepItem {
			if !d.keepItem[i] {
				continue
			}
			var reason string
			switch {
			case rawRight[i] == rawN[i]:
				reason = fmt.Sprintf("answered correctly by all %d persons who took it", rawN[i])
			case rawRight[i] == 0:
				reason = fmt.Sprintf("answered wrongly by all %d persons who took it", rawN[i])
			case n[i] == 0:
				reason = "answered only by persons with zero or perfect scores"
			case right[i] == n[i]:
				reason = fmt.Sprintf("answered correctly by all %d persons who took it once those with zero or perfect scores are left out", n[i])
			case right[i] == 0:
				reason = fmt.Sprintf("answered wrongly by all %d persons who took it once those with zero or perfect scores are left out", n[i])
			default:
				continue
			}
			d.drop(i, reason)
			changed = true
		}
	}
	return d
}

func (d *design) drop(i int, reason string) {
	d.keepItem[i] = false
	d.dropped = append(d.dropped, DroppedItem{ID: d.resp.Items[i], Reason: reason})
}

// check returns a *DesignError if the kept data cannot be put on one scale: first the booklet
// design (items linked by the persons who answered both), then Fischer's condition (the directed
// graph with an edge i → j whenever some person answered i right and j wrong must be strongly
// connected, else the difficulties of one part can move without bound against the rest).
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
			if x == 1 {
				rights = append(rights, index[i])
			} else {
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
