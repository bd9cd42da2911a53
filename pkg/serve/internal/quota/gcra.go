package quota

import (
	"math"
	"sync"
	"time"
)

// policy is one client's effective rate: requests per second and the bucket's size.
type policy struct {
	rate  float64
	burst int
}

// interval is the time one request takes from the bucket, at least a microsecond (Redis
// counts in microseconds).
func (p policy) interval() time.Duration {
	return max(time.Duration(float64(time.Second)/p.rate), time.Microsecond)
}

// share is this replica's part of p when the replicas cannot share one budget: rate/n and
// ⌈burst/n⌉.
func (p policy) share(n int) policy {
	if n <= 1 {
		return p
	}
	return policy{rate: p.rate / float64(n), burst: int(math.Ceil(float64(p.burst) / float64(n)))}
}

// decision is the outcome of one request against a rate.
type decision struct {
	allowed   bool
	remaining int           // requests that could be made at once after this one
	wait      time.Duration // refused: until one request is allowed
	full      time.Duration // until the bucket is full again
}

// gcra decides one request at now against tat (the time the bucket is full again; zero for a
// client not seen), counted in intervals of was (the interval tat was last moved by), and
// returns the new tat: the generic cell rate algorithm, the same arithmetic as rateScript. When
// the client's rate changed since (a reload), the time still owed is rescaled to the new
// interval: the bucket keeps the share of requests it had, so a raised rate applies at once.
func gcra(p policy, tat time.Time, was time.Duration, now time.Time) (decision, time.Time) {
	iv := p.interval()
	if tat.Before(now) {
		tat = now
	} else if was > 0 && was != iv {
		tat = now.Add(time.Duration(float64(tat.Sub(now)) * float64(iv) / float64(was)))
	}
	next := tat.Add(iv)
	allowAt := next.Add(-time.Duration(p.burst) * iv)
	if allowAt.After(now) {
		return decision{wait: allowAt.Sub(now), full: tat.Sub(now)}, tat
	}
	return decision{allowed: true, remaining: int(now.Sub(allowAt) / iv), full: next.Sub(now)}, next
}

// local keeps the buckets of this replica's clients in memory. Clients come from the clients
// file (a token names one), so the map is bounded by it.
type local struct {
	mu   sync.Mutex
	tats map[string]cell
}

// cell is one client's bucket: when it is full again, and the interval it was counted in.
type cell struct {
	tat time.Time
	iv  time.Duration
}

// maxLocal is the size past which full buckets are forgotten.
const maxLocal = 4096

func newLocal() *local { return &local{tats: map[string]cell{}} }

func (l *local) take(client string, p policy, now time.Time) decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.tats[client]
	d, tat := gcra(p, c.tat, c.iv, now)
	l.tats[client] = cell{tat, p.interval()}
	if len(l.tats) > maxLocal {
		// A bucket full again is the same as none: forget those (removed clients' among them).
		for id, c := range l.tats {
			if !c.tat.After(now) {
				delete(l.tats, id)
			}
		}
	}
	return d
}
