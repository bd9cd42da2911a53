package admission

import (
	"context"
	"sync"
)

// Each client's share. The streams' half of the budget and the read pools are held for as long as
// a caller takes to send its bytes: one client's idle streams or header-only calls must not hold
// what every other client needs, so a client over its share waits for its own holdings, or fails.

// ClientShareDivisor: a client without a concurrency limit holds 1/ClientShareDivisor of a pool.
const ClientShareDivisor = 4

// shareOf is a client's share of a pool of size: conc units, at most half the pool; a quarter
// without a concurrency limit; never less than least (a client may always have one).
func shareOf(size, unit, least int64, conc int) int64 {
	share := size / ClientShareDivisor
	if conc > 0 {
		share = min(int64(conc)*unit, size/2)
	}
	return max(share, least)
}

// shares are what each client holds of one pool.
type shares struct {
	mu   sync.Mutex
	held map[string]*holding
}

type holding struct {
	n     int64
	freed chan struct{} // closed when some of n is given back, for the takes waiting; nil: none waits
}

func newShares() *shares { return &shares{held: map[string]*holding{}} }

// take holds n for client within share, waiting (when wait is not nil) until the client's own
// holdings leave room or wait ends; false: refused.
func (s *shares) take(wait context.Context, client string, n, share int64) bool {
	for {
		s.mu.Lock()
		h := s.held[client]
		if h == nil {
			h = &holding{}
			s.held[client] = h
		}
		if h.n+n <= share {
			h.n += n
			s.mu.Unlock()
			return true
		}
		if wait == nil {
			s.dropIfEmpty(client, h)
			s.mu.Unlock()
			return false
		}
		if h.freed == nil {
			h.freed = make(chan struct{})
		}
		freed := h.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-wait.Done():
			s.mu.Lock()
			s.dropIfEmpty(client, s.held[client])
			s.mu.Unlock()
			return false
		}
	}
}

// freed is a channel closed at client's next give or wake: taken before a check that may fail,
// it cannot miss what frees room after the check.
func (s *shares) freed(client string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[client]
	if h == nil {
		h = &holding{}
		s.held[client] = h
	}
	if h.freed == nil {
		h.freed = make(chan struct{})
	}
	return h.freed
}

// wake closes client's freed channel: room came free outside the shares (a stream's reserve).
func (s *shares) wake(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[client]; h != nil && h.freed != nil {
		close(h.freed)
		h.freed = nil
	}
}

func (s *shares) give(client string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[client]
	h.n -= n
	if h.freed != nil {
		close(h.freed)
		h.freed = nil
	}
	s.dropIfEmpty(client, h)
}

// dropIfEmpty forgets a client that holds nothing and has no take waiting (s.mu held).
func (s *shares) dropIfEmpty(client string, h *holding) {
	if h != nil && h.n == 0 && h.freed == nil {
		delete(s.held, client)
	}
}
