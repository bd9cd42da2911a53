package admission

import "github.com/prometheus/client_golang/prometheus/testutil"

// Admitted is what the budget has granted, as its in-use gauge reports it.
func (b *Budget) Admitted() int64 { return int64(testutil.ToFloat64(b.inUse)) }

// Waiting is the calls waiting in the queues.
func (b *Budget) Waiting() int { return int(b.q.waiting.Load()) }

// StreamsHeldBy is what client's streams hold of the streams' half of the budget.
func (b *Budget) StreamsHeldBy(client string) int64 { return b.clientStreams.heldBy(client) }

// HeldBy is what client's reads hold.
func (p *ReadPool) HeldBy(client string) int64 { return p.clients.heldBy(client) }

// heldBy is what client holds of s.
func (s *shares) heldBy(client string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[client]; h != nil {
		return h.n
	}
	return 0
}
