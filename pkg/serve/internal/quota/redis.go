package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix starts every key the limiter writes: yardstick:rate:<service>:<clientId>, a
// hash {tat: the time (µs, Redis's clock) the client's bucket is full again, iv: the interval it
// was counted in}, expiring when the bucket is full.
const RedisKeyPrefix = "yardstick:rate:"

// As the login throttle's: a call to Redis must not hold a request long when Redis is slow or
// gone, is not retried, and a Redis found down is left alone for redisRetry.
const (
	redisTimeout = 250 * time.Millisecond
	redisRetry   = time.Second
)

// rateScript is gcra (gcra.go) in Redis, on Redis's clock. KEYS[1] the client's key, a hash
// {tat, iv}; ARGV the interval (µs) and the burst. Returns {allowed (0/1), remaining, wait µs,
// full µs}. Lua's doubles hold microseconds since 1970 exactly (2^53 µs is 285 years).
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

// shared keeps the buckets in Redis, where every replica sees them.
type shared struct {
	client  *redis.Client
	log     *slog.Logger
	prefix  string
	retry   time.Duration
	timeout time.Duration

	mu      sync.Mutex
	down    bool      // the last call failed
	retryAt time.Time // while down: when the next call may try Redis again

	fallbacks atomic.Uint64 // decisions made without Redis
}

// newShared connects lazily: an unreachable Redis at start is a fallback, not a start-up error.
func newShared(rawURL, service string, replicas int, log *slog.Logger) (*shared, error) {
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = redisTimeout
		}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	if o.DialerRetries == 0 {
		o.DialerRetries = 1
	}
	log.Info("client limits: rates shared through Redis", "redis", o.Addr, "key_prefix", RedisKeyPrefix+service+":", "replicas", replicas)
	return &shared{client: redis.NewClient(o), log: log, prefix: RedisKeyPrefix + service + ":", retry: redisRetry,
		timeout: 2 * redisTimeout}, nil
}

var errSkipped = errors.New("redis: skipped until the retry time")

// take decides one request of client in Redis; ok is false when Redis was not asked or did not
// answer (the caller then decides locally).
func (s *shared) take(client string, p policy, replicas int) (d decision, ok bool) {
	if !s.tryNow() {
		return d, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	v, err := rateScript.Run(ctx, s.client, []string{s.prefix + client}, p.interval().Microseconds(), p.burst).Int64Slice()
	cancel()
	if err == nil && len(v) != 4 {
		err = fmt.Errorf("rate script answered %d values, want 4", len(v))
	}
	s.after(err, replicas)
	if err != nil {
		return d, false
	}
	return decision{allowed: v[0] == 1, remaining: int(v[1]), wait: time.Duration(v[2]) * time.Microsecond,
		full: time.Duration(v[3]) * time.Microsecond}, true
}

// tryNow says whether to ask Redis: always while it answers; once it did not, only one caller
// at each retry time.
func (s *shared) tryNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return true
	}
	if time.Now().Before(s.retryAt) {
		s.fallbacks.Add(1)
		return false
	}
	s.retryAt = time.Now().Add(s.retry) // the others decide locally while this one tries
	return true
}

// after records the outcome of a call, logging a change between up and down once each way.
func (s *shared) after(err error, replicas int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fallbacks.Add(1)
		if !s.down {
			s.down = true
			s.log.Warn("client limits: Redis unreachable; each replica enforces rate/N and burst/N in its own memory until it is back",
				"replicas", replicas, "err", err.Error())
		}
		s.retryAt = time.Now().Add(s.retry)
		return
	}
	if s.down {
		s.down = false
		s.log.Info("client limits: Redis reachable again; rates shared")
	}
}

func (s *shared) close() error { return s.client.Close() }
