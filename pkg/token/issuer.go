package token

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Options configure New. Zero values take the documented defaults.
type Options struct {
	ClientsFile string        // path to the clients YAML; "" allowed only when Dev
	KeysDir     string        // directory of Ed25519 private keys (<kid>.pem); "" allowed only when Dev (ephemeral key)
	Dev         bool          // adds client DevClientID / DevClientSecret with "*" on both services
	Issuer      string        // iss; default DefaultIssuer
	TTL         time.Duration // token lifetime; default DefaultTTL, at least 1s
	Leeway      time.Duration // clock skew allowed on exp, nbf and iat; default DefaultLeeway
	Throttle    ThrottleConfig
	// RedisURL, when set (redis://[user:password@]host:port[/db], or rediss:// for TLS; go-redis's
	// query options such as dial_timeout are honoured), shares the Throttle's buckets among every
	// replica through Redis, so that an attacker gets the same budget against one replica as
	// against many. Empty: each process keeps its own. An unreachable Redis is no start-up error:
	// each replica then goes by its own buckets, which never stop counting (throttle_redis.go).
	RedisURL string
	// Logger receives the throttle's few lines about Redis: shared at start, unreachable, back.
	// Nothing else here logs. Nil: silent.
	Logger *slog.Logger
	// HashConcurrency bounds the argon2id checks running at once; default half of GOMAXPROCS,
	// at least 1, at most 4. Fast ($sha256$) checks take no slot: they cost a microsecond.
	HashConcurrency int
	// HashQueueWait is how long a login waits for a hashing slot before Authenticate answers
	// *BusyError; default DefaultHashQueueWait (500 ms).
	HashQueueWait time.Duration
	// KeyLifetime is how long a signing key should be used, counted from the time in its kid
	// (GenerateKey's form); it sets KeyInfo.RotateBy, which the frame exports so that an alert
	// can warn before it passes. 0: no date. It never stops a key from signing or verifying.
	KeyLifetime time.Duration
	Now         func() time.Time // for tests; default time.Now
}

// Defaults of Options, and the dev-mode demo client (its secret is public by design).
const (
	DefaultIssuer   = "yardstick"
	DefaultTTL      = 24 * time.Hour
	DefaultLeeway   = 30 * time.Second
	DevClientID     = "demo"
	DevClientSecret = "demo-secret"
)

// Issuer authenticates clients, issues their tokens and verifies tokens. It is safe for
// concurrent use, Reload included.
type Issuer struct {
	opts      Options
	throttle  *throttle
	hashing   *gate // bounds concurrent argon2 runs, their CPU and their memory
	parsers   map[string]*jwt.Parser
	demo      *client      // dev mode only
	ephemeral *keySet      // dev mode without KeysDir
	reload    sync.Mutex   // one load at a time; guards loaded and seen
	loaded    fingerprints // of the files state was loaded from
	// seen is when the clients file was last read and found to hold the current registry's
	// clients, by a parse or an unchanged fingerprint.
	seen   time.Time
	state  atomic.Pointer[state]
	logins loginCounters
	// changed is closed when a reload replaces the state, and replaced by a new channel: what a
	// long call waits on to check its token again (Changed).
	changed atomic.Pointer[chan struct{}]
	// afterRead, when set (tests), runs between the clients file's read and the stat after it.
	afterRead func()
}

// state is what Reload replaces; readers load it once per call and see one consistent version.
type state struct {
	clients *registry
	keys    *keySet
}

// registry is the set of clients, by id.
type registry struct {
	byID map[string]*client
	// dummy is verified against when the client id is unknown, so that an unknown id runs the
	// same code as a wrong secret. It is a fast hash: an unknown id is what an attacker can send
	// without knowing anything, so it must never cost an argon2 run (client ids are not secrets,
	// RFC 6749 §2.2; the answer is the same ErrNotAuthenticated).
	dummy phc
	// since holds, for each client registered (or re-keyed) after start, the time of the last
	// load that did not have it with its present secret hash: tokens issued before are void.
	since map[string]time.Time
}

// New loads the clients file and the keys dir. Outside dev mode both are required; every
// problem in them is reported, with file:line for the clients file.
func New(opts Options) (*Issuer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	i := &Issuer{
		opts:     opts,
		throttle: newThrottle(opts.Throttle),
		hashing:  newGate(opts.HashConcurrency, opts.HashQueueWait),
		parsers:  map[string]*jwt.Parser{},
	}
	for _, s := range Services() {
		i.parsers[s] = jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
			jwt.WithIssuer(opts.Issuer),
			jwt.WithAudience(s),
			jwt.WithLeeway(opts.Leeway),
			jwt.WithTimeFunc(opts.Now),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithStrictDecoding(),
		)
	}
	if opts.Dev {
		h := demoHash()
		i.demo = newClient(DevClientID, h, Services(), []string{PermAll}, 0)
		if opts.KeysDir == "" {
			if i.ephemeral, err = ephemeralKeys(); err != nil {
				return nil, fmt.Errorf("token: %w", err)
			}
		}
	}
	st, _, err := i.load(state{})
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	if opts.RedisURL != "" {
		if i.throttle.shared, err = newRedisStore(opts.RedisURL, opts.Logger); err != nil {
			return nil, fmt.Errorf("token: throttle: %w", err)
		}
	}
	i.state.Store(&st)
	ch := make(chan struct{})
	i.changed.Store(&ch)
	return i, nil
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case !o.Dev && o.ClientsFile == "":
		return o, errors.New("no clients file configured (only dev mode may run without one)")
	case !o.Dev && o.KeysDir == "":
		return o, errors.New("no keys dir configured (only dev mode may run without one)")
	case o.TTL < 0 || (o.TTL > 0 && o.TTL < time.Second):
		return o, fmt.Errorf("TTL %s is below one second", o.TTL)
	case o.Leeway < 0:
		return o, fmt.Errorf("leeway %s is negative", o.Leeway)
	case o.HashConcurrency < 0:
		return o, fmt.Errorf("hash concurrency %d is negative", o.HashConcurrency)
	case o.HashQueueWait < 0:
		return o, fmt.Errorf("hash queue wait %s is negative", o.HashQueueWait)
	case o.KeyLifetime < 0:
		return o, fmt.Errorf("key lifetime %s is negative", o.KeyLifetime)
	}
	if o.HashConcurrency == 0 {
		o.HashConcurrency = defaultHashConcurrency()
	}
	if o.HashQueueWait == 0 {
		o.HashQueueWait = DefaultHashQueueWait
	}
	if o.Issuer == "" {
		o.Issuer = DefaultIssuer
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Leeway == 0 {
		o.Leeway = DefaultLeeway
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var err error
	o.Throttle, err = o.Throttle.withDefaults()
	return o, err
}

// Authenticate checks a client's credentials and issues a token for service.
//
// Errors: *ThrottledError when a bucket of failures is empty, that of the client id from this
// address, of this address, or of the client id from all addresses (see [ThrottleConfig]; checked
// before any hashing, and only failed checks are counted); *BusyError (errors.Is ErrBusy) when
// an argon2 check found no hashing slot within Options.HashQueueWait; ErrNotAuthenticated, bare, for an unknown client or a wrong secret alike
// (an unknown id is checked against a dummy fast hash, and throttled the same way);
// an error wrapping ErrPermissionDenied when the client has no right on service.
//
// remoteAddr is the caller's "host:port" or bare host; failures are counted per address, so the
// caller must pass one. An empty remoteAddr is not an error: it counts as one address that every
// such caller shares, so their failures add up and can throttle each other.
func (i *Issuer) Authenticate(clientID, secret, service, remoteAddr string) (Token, error) {
	if !knownService(service) {
		return Token{}, fmt.Errorf("token: authenticate: unknown service %q", service)
	}
	ck, rk := clientKey(clientID), remoteKey(remoteAddr)
	if wait := i.throttle.blocked(ck, rk, i.opts.Now()); wait > 0 {
		i.logins.throttled.Add(1)
		return Token{}, &ThrottledError{RetryAfter: wait}
	}
	st := i.state.Load()
	c := st.clients.byID[clientID]
	ok, err := i.secretMatches(st.clients, c, secret)
	if err != nil {
		i.logins.busy.Add(1)
		return Token{}, err
	}
	if !ok {
		i.logins.invalidClient.Add(1)
		if i.throttle.fail(ck, rk, c != nil, i.opts.Now()) {
			i.logins.lockouts.Add(1)
		}
		return Token{}, ErrNotAuthenticated
	}
	if !c.mayUse(service) {
		i.logins.forbidden.Add(1)
		return Token{}, fmt.Errorf("%w: client %q has no right on the %s service", ErrPermissionDenied, c.id, service)
	}
	t, err := i.issue(st.keys, c, service)
	if err == nil {
		i.logins.success.Add(1)
	}
	return t, err
}

// secretMatches runs exactly one hash check whether or not the client exists; an argon2 check
// first takes a hashing slot, and *BusyError is the answer when none frees up in time.
func (i *Issuer) secretMatches(reg *registry, c *client, secret string) (bool, error) {
	h := reg.dummy
	if c != nil {
		h = c.hash
	}
	if h.slow() {
		if !i.hashing.enter() {
			return false, &BusyError{RetryAfter: BusyRetryAfter}
		}
		defer i.hashing.leave()
	}
	return h.matches(secret) && c != nil && secret != "", nil
}

// ThrottleFallbacks counts the throttle checks and counted failures that were decided by this
// replica's own buckets alone because Redis (Options.RedisURL) did not answer; always 0 without
// Redis. The serving frame exports it as a metric.
func (i *Issuer) ThrottleFallbacks() uint64 {
	if i.throttle.shared == nil {
		return 0
	}
	return i.throttle.shared.Fallbacks()
}

// Close releases the connections to Redis, if any. The Issuer must not be used after.
func (i *Issuer) Close() error {
	if i.throttle.shared == nil {
		return nil
	}
	return i.throttle.shared.Close()
}

// JWKS is the JSON Web Key Set of every public key (kty OKP, crv Ed25519, kid, alg EdDSA,
// use sig), the signing key first; served at /.well-known/jwks.json.
func (i *Issuer) JWKS() []byte { return slices.Clone(i.state.Load().keys.jwks) }

// Summary describes the loaded state for start-up logs, without secrets, e.g.
// "3 clients, 2 keys (signing kid=20261122T101500Z-3f9a1c2b)".
func (i *Issuer) Summary() string {
	st := i.state.Load()
	s := fmt.Sprintf("%s, %s (signing kid=%s)", plural(len(st.clients.byID), "client"),
		plural(len(st.keys.public), "key"), st.keys.signer.kid)
	if i.opts.Dev {
		s += fmt.Sprintf("; dev mode: demo client %q with all permissions", DevClientID)
		if st.keys.ephemeral {
			s += ", ephemeral signing key"
		}
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
