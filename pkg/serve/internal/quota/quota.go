package quota

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
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
	// Client is the authenticated client of a call's context; default authz.ClientID.
	Client func(context.Context) string
	Log    *slog.Logger
	Now    func() time.Time // for tests; default time.Now
}

// Limiter enforces every client's limits. It is safe for concurrent use.
type Limiter struct {
	cfg     Config
	local   *local
	shared  *shared // nil without Redis
	metrics *metrics

	mu      sync.Mutex
	running map[string]int // calls in progress on this replica, per client with a concurrency limit

	policies sync.Map // policy → its RateLimit-Policy header
}

// New makes a limiter. A Redis URL that does not parse is an error; an unreachable Redis is not.
func New(cfg Config) (*Limiter, error) {
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits == nil {
		cfg.Limits = func(string) (token.Limits, bool) { return token.Limits{}, false }
	}
	if cfg.Client == nil {
		cfg.Client = authz.ClientID
	}
	if cfg.Clients == nil {
		cfg.Clients = func() []string { return nil }
	}
	l := &Limiter{cfg: cfg, local: newLocal(), running: map[string]int{}}
	l.metrics = newMetrics(cfg.Service, l)
	if cfg.RedisURL != "" {
		muteRedisLog.Do(func() { redis.SetLogger(quietLogger{}) })
		var err error
		if l.shared, err = newShared(cfg.RedisURL, cfg.Service, cfg.Replicas, cfg.Log); err != nil {
			return nil, fmt.Errorf("client limits: %w", err)
		}
	}
	return l, nil
}

var muteRedisLog sync.Once

// quietLogger silences go-redis's line per failed dial: the limiter logs the change itself.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// Close releases the connections to Redis, if any.
func (l *Limiter) Close() error {
	if l.shared == nil {
		return nil
	}
	return l.shared.close()
}

// Fallbacks counts the rate decisions made without Redis while one is configured.
func (l *Limiter) Fallbacks() uint64 {
	if l.shared == nil {
		return 0
	}
	return l.shared.redis.Fallbacks()
}

// limitsOf is the client's effective limits: its own from the clients file, each missing one
// from the defaults; rated is false when it has no rate (no rate limit, no headers).
func (l *Limiter) limitsOf(client string) (p policy, rated bool, concurrency int) {
	own, _ := l.cfg.Limits(client)
	rate, burst, conc := own.Rate, own.Burst, own.Concurrency
	if rate == 0 {
		rate = l.cfg.Rate
	}
	if burst == 0 {
		burst = l.cfg.Burst
	}
	if burst == 0 && rate > 0 {
		burst = max(1, int(math.Ceil(rate))) // one second of the rate
	}
	if conc == 0 {
		conc = l.cfg.Concurrency
	}
	return policy{rate: rate, burst: burst}, rate > 0, conc
}

// Outcome is what the limits said of one call: whether it may run, the headers due to a client
// with a rate (Policy and State empty otherwise), and the refusal when it may not.
type Outcome struct {
	Policy string // RateLimit-Policy, e.g. "rate";q=50;w=1
	State  string // RateLimit, e.g. "rate";r=0;t=1
	Err    error  // nil when the call may run: a 429 Throttled (gRPC RESOURCE_EXHAUSTED) with RetryInfo otherwise
	slot   *slot  // the call's place in its client's concurrency, if it took one
}

// Done ends the call's hold on its client's concurrency: a no-op when it took none (or was
// refused), and when called again.
func (o Outcome) Done() {
	if o.slot != nil && o.slot.held.Swap(false) {
		o.slot.l.release(o.slot.client)
	}
}

// slot is one call's place in its client's concurrency.
type slot struct {
	l      *Limiter
	client string
	held   atomic.Bool
}

// Admit decides one unary call of client: its rate first (a refused call spends nothing), then
// its concurrency on this replica (refused at once, never queued behind the client's own calls).
func (l *Limiter) Admit(client string) Outcome {
	p, rated, conc := l.limitsOf(client)
	var out Outcome
	if rated {
		d := l.take(client, p)
		out.Policy, out.State = l.policyHeader(p), stateHeader(d)
		if !d.allowed {
			l.metrics.throttled(client, ReasonRate)
			out.Err = throttled(p, d.wait, ReasonRate, conc)
			return out
		}
	}
	if conc > 0 {
		if !l.acquire(client, conc) {
			l.metrics.throttled(client, ReasonConcurrency)
			out.Err = throttled(p, time.Second, ReasonConcurrency, conc)
			return out
		}
		out.slot = l.hold(client)
	}
	return out
}

// hold is a held slot of client's concurrency (acquire took it).
func (l *Limiter) hold(client string) *slot {
	sl := &slot{l: l, client: client}
	sl.held.Store(true)
	return sl
}

// take decides one request against the client's rate: in Redis when configured and answering,
// else in this replica's memory at its share.
func (l *Limiter) take(client string, p policy) decision {
	if l.shared != nil {
		if d, ok := l.shared.take(client, p); ok {
			return d
		}
	}
	return l.local.take(client, p.share(l.cfg.Replicas), l.cfg.Now())
}

func (l *Limiter) acquire(client string, limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[client] >= limit {
		return false
	}
	l.running[client]++
	return true
}

func (l *Limiter) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[client]--; l.running[client] <= 0 {
		delete(l.running, client)
	}
}

// Running is the client's calls in progress on this replica (for tests and the soak).
func (l *Limiter) Running(client string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[client]
}

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
	return `"rate";r=` + strconv.Itoa(d.remaining) + ";t=" + strconv.FormatInt(ceilSeconds(d.full), 10)
}

func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// policyHeader is RateLimit-Policy for p, made once per policy: a client's policy changes only
// with a reload.
func (l *Limiter) policyHeader(p policy) string {
	if h, ok := l.policies.Load(p); ok {
		return h.(string)
	}
	h := policyHeader(p)
	l.policies.Store(p, h)
	return h
}
