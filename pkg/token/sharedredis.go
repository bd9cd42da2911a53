package token

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

// Defaults of a shared Redis connection when its URL does not set them: a call must not hold a
// request for long when Redis is slow or gone, and a failed call is not retried (the replica
// decides on its own instead, and tries Redis again after redisRetry).
const (
	redisTimeout = 250 * time.Millisecond
	redisRetry   = time.Second
)

// SharedRedis is the Redis every replica shares, as the login throttle (here) and the serving
// frame's client limits (pkg/serve's quota) use it: connected lazily (an unreachable Redis at
// start is a fallback, not a start-up error), short timeouts and no retries, and a breaker —
// once a call fails, Redis is left alone for redisRetry (one caller tries at the retry time), so
// that a dead Redis costs at most one timeout a second, not one per request. A change between
// up and down is logged once each way.
type SharedRedis struct {
	client   *redis.Client
	log      *slog.Logger
	down, up string // the WARN when Redis stops answering, the INFO when it is back
	attrs    []any  // logged with the WARN, before the error
	retry    time.Duration

	mu      sync.Mutex
	isDown  bool      // the last call failed
	retryAt time.Time // while down: when the next call may try Redis again

	fallbacks atomic.Uint64 // calls not made or failed: decided without Redis
}

// ErrRedisSkipped is Call's answer while Redis is down and its retry time has not come.
var ErrRedisSkipped = errors.New("redis: skipped until the retry time")

// DialRedis prepares the connection to rawURL (redis:// or rediss://; a URL that does not parse
// is an error): down is the WARN logged when Redis stops answering (with attrs and the error),
// up the INFO when it answers again. A nil log discards both.
func DialRedis(rawURL string, log *slog.Logger, down, up string, attrs ...any) (*SharedRedis, error) {
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err) // go-redis's message does not quote the URL
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = redisTimeout
		}
	}
	// Call's context bounds a call (two timeouts) only with this: go-redis otherwise leaves a
	// read to the connection's read timeout, which a URL may set far longer.
	o.ContextTimeoutEnabled = true
	if o.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	if o.DialerRetries == 0 {
		o.DialerRetries = 1 // go-redis would dial 5 times, 100 ms apart, before giving up
	}
	// go-redis writes a line to stderr for every failed dial, which would be one per request
	// while Redis is down; the breaker logs the change itself, once each way.
	muteRedisLog.Do(func() { redis.SetLogger(quietLogger{}) })
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SharedRedis{client: redis.NewClient(o), log: log, down: down, up: up, attrs: attrs, retry: redisRetry}, nil
}

// Addr is the server's host:port, for logs.
func (s *SharedRedis) Addr() string { return s.client.Options().Addr }

// Fallbacks counts the calls that were skipped or failed: each a decision made without Redis.
func (s *SharedRedis) Fallbacks() uint64 { return s.fallbacks.Load() }

// Close closes the connection pool.
func (s *SharedRedis) Close() error { return s.client.Close() }

// Call runs f with the client and a context of two timeouts, unless Redis is down and its retry
// time has not come (ErrRedisSkipped); only one caller tries at the retry time.
func (s *SharedRedis) Call(f func(context.Context, *redis.Client) error) error {
	s.mu.Lock()
	if s.isDown {
		if time.Now().Before(s.retryAt) {
			s.mu.Unlock()
			s.fallbacks.Add(1)
			return ErrRedisSkipped
		}
		s.retryAt = time.Now().Add(s.retry) // the others skip while this one tries
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 2*redisTimeout)
	err := f(ctx, s.client)
	cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fallbacks.Add(1)
		if !s.isDown {
			s.isDown = true
			s.log.Warn(s.down, append(append([]any(nil), s.attrs...), "err", err.Error())...)
		}
		s.retryAt = time.Now().Add(s.retry)
		return err
	}
	if s.isDown {
		s.isDown = false
		s.log.Info(s.up)
	}
	return nil
}

var muteRedisLog sync.Once

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
