package quota

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// RedisKeyPrefix starts every key the limiter writes: yardstick:rate:<service>:<clientId>, a
// hash {tat: the time (µs, Redis's clock) the client's bucket is full again, iv: the interval it
// was counted in}, expiring when the bucket is full.
const RedisKeyPrefix = "yardstick:rate:"

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

// shared keeps the buckets in Redis, where every replica sees them, through the connection and
// breaker the login throttle uses (token.SharedRedis: short timeouts, no retries, Redis left
// alone for a second after a failure, one WARN and one INFO per outage).
type shared struct {
	redis  *token.SharedRedis
	prefix string
}

// newShared connects lazily: an unreachable Redis at start is a fallback, not a start-up error.
func newShared(rawURL, service string, replicas int, log *slog.Logger) (*shared, error) {
	r, err := token.DialRedis(rawURL, log,
		"client limits: Redis unreachable; each replica enforces rate/N and burst/N in its own memory until it is back",
		"client limits: Redis reachable again; rates shared", "replicas", replicas)
	if err != nil {
		return nil, err
	}
	log.Info("client limits: rates shared through Redis", "redis", r.Addr(), "key_prefix", RedisKeyPrefix+service+":", "replicas", replicas)
	return &shared{redis: r, prefix: RedisKeyPrefix + service + ":"}, nil
}

// take decides one request of client in Redis; ok is false when Redis was not asked or did not
// answer (the caller then decides locally).
func (s *shared) take(client string, p policy) (d decision, ok bool) {
	var v []int64
	err := s.redis.Call(func(ctx context.Context, c *redis.Client) error {
		var err error
		v, err = rateScript.Run(ctx, c, []string{s.prefix + client}, p.interval().Microseconds(), p.burst).Int64Slice()
		if err == nil && len(v) != 4 {
			err = fmt.Errorf("rate script answered %d values, want 4", len(v))
		}
		return err
	})
	if err != nil {
		return d, false
	}
	return decision{allowed: v[0] == 1, remaining: int(v[1]), wait: time.Duration(v[2]) * time.Microsecond,
		full: time.Duration(v[3]) * time.Microsecond}, true
}

func (s *shared) close() error { return s.redis.Close() }
