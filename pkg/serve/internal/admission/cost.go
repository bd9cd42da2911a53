package admission

import (
	"bytes"
	"errors"
)

const otherPerByte = 30 // heap per body byte of other calls of 64 KiB to 1 MiB: 28 at worst measured

// GroupCost is a group call's cost model, measured by its service against its own handler: Base,
// and the more of its front's heap per body byte and per entry its body can hold (at most the route's).
type GroupCost struct {
	JSON, Proto FrontCost // a JSON body; a protobuf message
	Base        int64     // heap per call, whatever its size
}

// FrontCost is a group call's heap on one front: per body byte, per entry however short, and the
// fewest body bytes an entry takes (n bytes hold at most n/MinEntryBytes entries).
type FrontCost struct{ PerByte, PerEntry, MinEntryBytes int64 }

// Group is a group call's route as the budget costs it: its service's model and most entries.
type Group struct {
	Cost    GroupCost
	Entries int64
}

// Check refuses a model that would let a large call in for nothing (or divide by zero).
func (m GroupCost) Check() error {
	switch {
	case !m.JSON.whole():
		return errors.New("cost model: JSON needs PerByte, PerEntry and MinEntryBytes above 0")
	case !m.Proto.whole():
		return errors.New("cost model: Proto needs PerByte, PerEntry and MinEntryBytes above 0")
	case m.Base < 0:
		return errors.New("cost model: Base below 0")
	}
	return nil
}

func (f FrontCost) whole() bool { return f.PerByte > 0 && f.PerEntry > 0 && f.MinEntryBytes > 0 }

// Cost is the estimated heap of a call of n body bytes (JSON bytes when json, else protobuf bytes)
// on a group call's route g, or on any other route when g is nil: small calls of those cost nothing.
func (b *Budget) Cost(g *Group, n int64, json bool) int64 {
	switch {
	case g == nil && n < SmallRequestBytes:
		return 0
	case g == nil:
		return otherPerByte * n
	}
	f := g.Cost.Proto
	if json {
		f = g.Cost.JSON
	}
	return g.cost(f, n, n/f.MinEntryBytes)
}

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
	brackets := int64(bytes.Count(body, []byte{'['}) + bytes.Count(body, []byte{'{'}))
	return g.cost(g.Cost.JSON, n, min(brackets, n/g.Cost.JSON.MinEntryBytes))
}
