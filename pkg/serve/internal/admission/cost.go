package admission

import (
	"bytes"
	"errors"
)

// otherPerByte is the heap per body byte of a call of 64 KiB to 1 MiB on a route that is not a
// group call: 28 at worst, measured over the contract's rpcs.
const otherPerByte = 30

// GroupCost is a group call's cost model, which its service measures against its own handler (the
// frame cannot know what an entry costs): a call takes Base, and at least each front's heap per
// body byte, or per entry for the most entries its body can hold, whichever is more.
type GroupCost struct {
	JSON  FrontCost // a JSON body
	Proto FrontCost // a protobuf message
	Base  int64     // heap per call, whatever its size
}

// FrontCost is a group call's heap on one front.
type FrontCost struct {
	PerByte       int64 // heap per body byte
	PerEntry      int64 // heap per entry, however short
	MinEntryBytes int64 // the fewest body bytes an entry takes: n bytes hold n/MinEntryBytes entries
}

// Group is what the budget knows of a group call's route: its service's model and the most entries
// one call takes (routes.Method.Entries).
type Group struct {
	Cost    GroupCost
	Entries int64
}

// Check says what is missing from a model: a front without its heap per byte, per entry or an
// entry's fewest bytes would let a large call in for nothing (or divide by zero).
func (m GroupCost) Check() error {
	for _, f := range []struct {
		name string
		c    FrontCost
	}{{"JSON", m.JSON}, {"Proto", m.Proto}} {
		if f.c.PerByte <= 0 || f.c.PerEntry <= 0 || f.c.MinEntryBytes <= 0 {
			return errors.New("cost model: " + f.name + " needs PerByte, PerEntry and MinEntryBytes above 0")
		}
	}
	if m.Base < 0 {
		return errors.New("cost model: Base below 0")
	}
	return nil
}

// Cost is the estimated heap of a call of n body bytes (JSON bytes when json, else protobuf bytes)
// on a group call's route g, or on any other route when g is nil: small calls of those cost nothing.
func (b *Budget) Cost(g *Group, n int64, json bool) int64 {
	if g == nil {
		if n < SmallRequestBytes {
			return 0
		}
		return otherPerByte * n
	}
	f := g.Cost.Proto
	if json {
		f = g.Cost.JSON
	}
	return g.cost(f, n, n/f.MinEntryBytes)
}

// cost is the cost of n body bytes on front f holding at most entries entries.
func (g *Group) cost(f FrontCost, n, entries int64) int64 {
	return g.Cost.Base + max(f.PerByte*n, f.PerEntry*min(entries, g.Entries))
}

// CostOfBody is the cost of a JSON body once read: on a group call's route g, bounded by its
// entries, as every entry opens with a bracket, and never more than the cost from its size.
func (b *Budget) CostOfBody(g *Group, body []byte) int64 {
	n := int64(len(body))
	if g == nil {
		return b.Cost(nil, n, true)
	}
	f := g.Cost.JSON
	brackets := bytes.Count(body, []byte{'['}) + bytes.Count(body, []byte{'{'})
	return g.cost(f, n, min(int64(brackets), n/f.MinEntryBytes))
}
