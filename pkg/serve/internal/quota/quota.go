package quota

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Config is the limiter's settings: the defaults of clients whose entry sets no limit, and how
// the replicas share the rate.
type Config struct {
	Service string
	// Rate, Burst and Concurrency are the defaults (YARDSTICK_CLIENT_RATE, …_BURST,
	// …_CONCURRENCY); 0 is unset. Burst unset is one second of the client's rate.
	Rate        float64
	Burst       int
	Concurrency int
	// Replicas is N, how many replicas share a rate when Redis does not (YARDSTICK_REPLICAS).
	Replicas int
	// RedisURL, when set, makes each client's rate one budget for every replica.
	RedisURL string
	// Limits are a registered client's own limits (token.Issuer.Limits), read at every call, so
	// a reload of the clients file shows at once.
	Limits func(clientID string) (token.Limits, bool)
	// Clients are the registered client ids (token.Issuer.ClientIDs): the metric's label values.
	Clients func() []string
	Log     *slog.Logger
}

// Limiter enforces every client's limits. It is safe for concurrent use.
type Limiter struct {
	cfg     Config
	redis   *token.SharedRedis // nil without Redis
	prefix  string             // of the clients' keys in Redis
	metrics *metrics

	mu      sync.Mutex
	running map[string]int   // calls in progress on this replica, per client with a concurrency limit
	cells   map[string]cell  // the clients' buckets in this replica's memory
	now     func() time.Time // time.Now; a test's clock
}

// New makes a limiter. A Redis URL that does not parse is an error; an unreachable Redis is not
// (connected lazily, it is a fallback).
func New(cfg Config) (*Limiter, error) {
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits == nil {
		cfg.Limits = func(string) (token.Limits, bool) { return token.Limits{}, false }
	}
	if cfg.Clients == nil {
		cfg.Clients = func() []string { return nil }
	}
	l := &Limiter{cfg: cfg, running: map[string]int{}, cells: map[string]cell{}, now: time.Now}
	l.metrics = newMetrics(cfg.Service, l)
	if cfg.RedisURL != "" {
		var err error
		l.redis, err = token.DialRedis(cfg.RedisURL, cfg.Log,
			"client limits: Redis unreachable; each replica enforces rate/N and burst/N in its own memory until it is back",
			"client limits: Redis reachable again; rates shared", "replicas", cfg.Replicas)
		if err != nil {
			return nil, fmt.Errorf("client limits: %w", err)
		}
		l.prefix = RedisKeyPrefix + cfg.Service + ":"
		cfg.Log.Info("client limits: rates shared through Redis", "redis", l.redis.Addr(), "key_prefix", l.prefix, "replicas", cfg.Replicas)
	}
	return l, nil
}

// Close releases the connections to Redis, if any.
func (l *Limiter) Close() error {
	if l.redis == nil {
		return nil
	}
	return l.redis.Close()
}

// Fallbacks counts the rate decisions made without Redis while one is configured.
func (l *Limiter) Fallbacks() uint64 {
	if l.redis == nil {
		return 0
	}
	return l.redis.Fallbacks()
}

// limitsOf is the client's effective limits: its own from the clients file, each missing one
// from the defaults; rated is false when it has no rate (no rate limit, no headers).
func (l *Limiter) limitsOf(client string) (p policy, rated bool, concurrency int) {
	own, _ := l.cfg.Limits(client)
	rate, burst := cmp.Or(own.Rate, l.cfg.Rate), cmp.Or(own.Burst, l.cfg.Burst)
	if burst == 0 && rate > 0 {
		burst = max(1, int(math.Ceil(rate))) // one second of the rate
	}
	return policy{rate: rate, burst: burst}, rate > 0, cmp.Or(own.Concurrency, l.cfg.Concurrency)
}

// Slot is one call's place in its client's concurrency: nil for a call that took none.
type Slot struct {
	l        *Limiter
	client   string
	released atomic.Bool
}

// Done gives the place back, once; a no-op on nil.
func (s *Slot) Done() {
	if s == nil || s.released.Swap(true) {
		return
	}
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	if s.l.running[s.client]--; s.l.running[s.client] <= 0 {
		delete(s.l.running, s.client)
	}
}

// Held reports whether s still holds its place (Done gives it back).
func (s *Slot) Held() bool { return s != nil && !s.released.Load() }

// Shared reports whether the rate is decided in Redis, a network round trip, which a caller that
// must not wait (gRPC's tap handle) leaves to the call's own goroutine.
func (l *Limiter) Shared() bool { return l != nil && l.redis != nil }

// Rate decides one request of client against its rate: the RateLimit-Policy and RateLimit
// headers of a client with a rate ("" otherwise), and the 429 when it is spent. A unary call's
// rate is decided before its concurrency (internal/gate), so that a call refused spends nothing.
func (l *Limiter) Rate(client string) (policy, state string, err error) {
	p, rated, conc := l.limitsOf(client)
	if !rated {
		return "", "", nil
	}
	d := l.take(client, p)
	if !d.allowed {
		err = l.refuse(client, p, d.wait, ReasonRate, conc)
	}
	return policyHeader(p), stateHeader(d), err
}

// Policy is the RateLimit-Policy of a client with a rate, "" otherwise.
func (l *Limiter) Policy(client string) string {
	if p, rated, _ := l.limitsOf(client); rated {
		return policyHeader(p)
	}
	return ""
}

// Acquire takes a place of client's concurrency on this replica, if it has a limit (nil
// otherwise): refused at once (429) when all are taken, never queued behind the client's own calls.
func (l *Limiter) Acquire(client string) (*Slot, error) {
	p, _, conc := l.limitsOf(client)
	if conc <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	full := l.running[client] >= conc
	if !full {
		l.running[client]++
	}
	l.mu.Unlock()
	if full {
		return nil, l.refuse(client, p, time.Second, ReasonConcurrency, conc)
	}
	return &Slot{l: l, client: client}, nil
}

// Header names, as gRPC metadata (lower case) and as the JSON front writes them.
const (
	PolicyHeader = "RateLimit-Policy"
	StateHeader  = "RateLimit"
	PolicyMD     = "ratelimit-policy"
	StateMD      = "ratelimit"
)

// policyHeader is RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-10): q requests per w
// seconds, w one second unless the rate is below one a second.
func policyHeader(p policy) string {
	w := 1.0
	if p.rate < 1 {
		w = math.Ceil(1 / p.rate)
	}
	q := max(int64(math.Floor(p.rate*w)), 1)
	return `"rate";q=` + strconv.FormatInt(q, 10) + ";w=" + strconv.FormatInt(int64(w), 10)
}

// stateHeader is RateLimit: r requests that could be made now, t whole seconds (rounded up)
// until the bucket is full again.
func stateHeader(d decision) string {
	return `"rate";r=` + strconv.Itoa(d.remaining) + ";t=" + strconv.FormatInt(int64(math.Ceil(d.full.Seconds())), 10)
}

// Reasons of a throttled call, the reason label of yardstick_client_throttled_total.
const (
	ReasonRate        = "rate"        // a unary call over the client's rate: answered 429
	ReasonConcurrency = "concurrency" // a call over the client's calls in progress: answered 429
	ReasonStream      = "stream"      // a stream's record or group entry waited for the rate (never refused)
)

// refuse counts a refused call and answers it: 429 Throttled (gRPC RESOURCE_EXHAUSTED) with the
// retry delay in whole seconds, at least 1.
func (l *Limiter) refuse(client string, p policy, wait time.Duration, reason string, concurrency int) error {
	l.metrics.throttled(client, reason)
	secs, retry := rpcerr.Retry(wait)
	msg, info := "Too many requests.", fmt.Sprintf("This client may make %s requests a second (burst %d); retry after %d seconds.",
		strconv.FormatFloat(p.rate, 'g', -1, 64), p.burst, secs)
	if reason == ReasonConcurrency {
		msg, info = "Too many requests in progress.", fmt.Sprintf("This client may have %d requests in progress at once; retry after %d seconds.",
			concurrency, secs)
	}
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, msg, info, retry)
}
