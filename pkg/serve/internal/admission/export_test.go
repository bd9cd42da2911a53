package admission

// StreamsHeldBy is what client's streams hold of the streams' half of the budget.
func (b *Budget) StreamsHeldBy(client string) int64 { return b.clientStreams.heldBy(client) }
