package token

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix starts every key the throttle writes to Redis. Each key expires once its
// bucket has refilled (a full bucket is the same as none), so Redis holds only the buckets
// of recent failures.
const RedisKeyPrefix = "yardstick:throttle:"

// bucketScript reads or counts the buckets KEYS, each a hash {full, last} in microseconds:
// the same generic cell rate algorithm as fill (throttle.go), in integers, which Lua's doubles
// hold exactly up to 2^53 µs (285 years). ARGV: "wait" or "take", now (µs), then burst and
// refill (µs) of each key. "wait" returns the longest wait (µs), "take" counts one failure in
// every bucket, sets each key to expire when its bucket is full again, and returns how many
// buckets that failure emptied (had a token before, none after: a lockout). One script, so that
// a failure is counted in all three buckets or in none, and a lockout by exactly one replica.
var bucketScript = redis.NewScript(`
local take = ARGV[1] == 'take'
local now = tonumber(ARGV[2])
local longest = 0
for i, key in ipairs(KEYS) do
  local burst, refill = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local v = redis.call('HMGET', key, 'full', 'last')
  local full = tonumber(v[1]) or 0
  local at = math.max(now, tonumber(v[2]) or 0)
  if take then
    local before = full - at - (burst - 1) * refill
    full = math.max(full, at) + refill
    if before <= 0 and full - at - (burst - 1) * refill > 0 then
      longest = longest + 1
    end
    redis.call('HSET', key, 'full', string.format('%.0f', full), 'last', string.format('%.0f', at))
    redis.call('PEXPIRE', key, math.floor((full - at) / 1000) + 1)
  elseif full > at then
    longest = math.max(longest, full - at - (burst - 1) * refill)
  end
end
return longest
`)

// redisStore keeps the throttle's buckets in Redis, where every replica sees them. When Redis
// cannot be reached it says so (ok false), and the throttle goes by this replica's own buckets
// alone; SharedRedis's breaker then leaves Redis alone for a second before trying again.
type redisStore struct{ *SharedRedis }

// newRedisStore connects lazily: an unreachable Redis at start is a fallback, not a start-up
// error, so the service starts and stays ready. A URL that does not parse is an error.
func newRedisStore(rawURL string, log *slog.Logger) (*redisStore, error) {
	s, err := DialRedis(rawURL, log,
		"login throttle: Redis unreachable; this replica limits failed logins in its own memory until it is back",
		"login throttle: Redis reachable again; limits shared")
	if err != nil {
		return nil, err
	}
	s.log.Info("login throttle: limits shared through Redis", "redis", s.Addr(), "keyPrefix", RedisKeyPrefix)
	return &redisStore{s}, nil
}

// keys are the Redis keys of the three buckets, in the order of ThrottleConfig's fields. The
// client id's length comes first in the pair key, so that no client id can make two pairs
// collide.
func redisKeys(clientKey, remoteKey string) []string {
	return []string{
		RedisKeyPrefix + "pair:" + strconv.Itoa(len(clientKey)) + ":" + clientKey + ":" + remoteKey,
		RedisKeyPrefix + "addr:" + remoteKey,
		RedisKeyPrefix + "client:" + clientKey,
	}
}

func redisArgs(op string, c ThrottleConfig, now time.Time) []any {
	args := []any{op, now.UnixMicro()}
	for _, b := range []Bucket{c.PerClient, c.PerAddress, c.PerClientGlobal} {
		args = append(args, b.Burst, max(b.Refill.Microseconds(), 1))
	}
	return args
}

// wait is the longest wait of the shared buckets; ok is false when Redis was not asked or did
// not answer.
func (s *redisStore) wait(c ThrottleConfig, clientKey, remoteKey string, now time.Time) (time.Duration, bool) {
	var us int64
	err := s.Call(func(ctx context.Context, rc *redis.Client) error {
		var err error
		us, err = bucketScript.Run(ctx, rc, redisKeys(clientKey, remoteKey), redisArgs("wait", c, now)...).Int64()
		return err
	})
	return time.Duration(us) * time.Microsecond, err == nil
}

// take counts one failure in the shared buckets, if Redis answers (ok), and says whether it
// emptied any of them (locked).
func (s *redisStore) take(c ThrottleConfig, clientKey, remoteKey string, now time.Time) (locked, ok bool) {
	var emptied int64
	err := s.Call(func(ctx context.Context, rc *redis.Client) error {
		var err error
		emptied, err = bucketScript.Run(ctx, rc, redisKeys(clientKey, remoteKey), redisArgs("take", c, now)...).Int64()
		return err
	})
	return emptied > 0, err == nil
}
