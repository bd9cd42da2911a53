package quota

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// policy is one client's effective rate: requests per second and the bucket's size.
type policy struct {
	rate  float64
	burst int
}

// interval is the time one request takes from the bucket, at least Redis's microsecond.
func (p policy) interval() time.Duration {
	return max(time.Duration(float64(time.Second)/p.rate), time.Microsecond)
}

// share is this replica's part of p when the replicas cannot share one budget.
func (p policy) share(n int) policy {
	return policy{rate: p.rate / float64(n), burst: int(math.Ceil(float64(p.burst) / float64(n)))}
}

// decision is the outcome of one request against a rate.
type decision struct {
	allowed   bool
	remaining int           // requests that could be made at once after this one
	wait      time.Duration // refused: until one request is allowed
	full      time.Duration // until the bucket is full again
}

// gcra decides one request at now against tat (zero for a client not seen), counted in intervals
// of was, and returns the new tat: rateScript's arithmetic. When the rate changed since (a
// reload), the time still owed is rescaled to the new interval: the bucket keeps its share of
// requests, so a raised rate applies at once.
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

// cell is one client's bucket in this replica's memory.
type cell struct {
	tat time.Time
	iv  time.Duration
}

// maxLocal is the size past which full buckets are forgotten. Clients come from the clients file
// (a token names one), so the map is bounded by it.
const maxLocal = 4096

// take decides one request against the client's rate: in Redis when answering, else in memory.
func (l *Limiter) take(client string, p policy) decision {
	if l.redis != nil {
		if d, err := l.takeShared(client, p); err == nil {
			return d
		}
	}
	p, now := p.share(l.cfg.Replicas), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cells[client]
	d, tat := gcra(p, c.tat, c.iv, now)
	l.cells[client] = cell{tat, p.interval()}
	if len(l.cells) > maxLocal {
		// A bucket full again is the same as none: forget those (removed clients' among them).
		for id, c := range l.cells {
			if !c.tat.After(now) {
				delete(l.cells, id)
			}
		}
	}
	return d
}

// RedisKeyPrefix starts every key the limiter writes: yardstick:rate:<service>:<clientId>, a
// hash {tat: the time (µs, Redis's clock) the client's bucket is full again, iv: the interval it
// was counted in}, expiring when the bucket is full.
const RedisKeyPrefix = "yardstick:rate:"

// rateScript is gcra in Redis. ARGV: the interval (µs) and the burst. Returns {allowed (0/1),
// remaining, wait µs, full µs}. Lua's doubles hold microseconds since 1970 exactly (2^53 µs is
// 285 years).
var rateScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local iv = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'tat', 'iv')
local tat = tonumber(v[1]) or 0
local was = tonumber(v[2]) or iv
if tat < now then
  tat = now
elseif was ~= iv then
  tat = now + math.floor((tat - now) * iv / was)
end
local nxt = tat + iv
local allow_at = nxt - burst * iv
if allow_at > now then
  return {0, 0, allow_at - now, tat - now}
end
redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', nxt), 'iv', string.format('%.0f', iv))
redis.call('PEXPIRE', KEYS[1], math.floor((nxt - now) / 1000) + 1)
return {1, math.floor((now - allow_at) / iv), 0, nxt - now}
`)

// takeShared decides one request of client in Redis; an error when Redis was not asked or did
// not answer.
func (l *Limiter) takeShared(client string, p policy) (decision, error) {
	var v []int64
	err := l.redis.Call(func(ctx context.Context, c *redis.Client) error {
		var err error
		v, err = rateScript.Run(ctx, c, []string{l.prefix + client}, p.interval().Microseconds(), p.burst).Int64Slice()
		if err == nil && len(v) != 4 {
			err = fmt.Errorf("rate script answered %d values, want 4", len(v))
		}
		return err
	})
	if err != nil {
		return decision{}, err
	}
	return decision{allowed: v[0] == 1, remaining: int(v[1]), wait: time.Duration(v[2]) * time.Microsecond,
		full: time.Duration(v[3]) * time.Microsecond}, nil
}
