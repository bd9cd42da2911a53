package token

import (
	"errors"
	"fmt"
	"runtime"
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
	hashing   chan struct{} // bounds concurrent argon2 runs, and so their memory
	parsers   map[string]*jwt.Parser
	demo      *client // dev mode only
	ephemeral *keySet // dev mode without KeysDir
	reload    sync.Mutex
	state     atomic.Pointer[state]
}

// state is what Reload replaces; readers load it once per call and see one consistent version.
type state struct {
	clients *registry
	keys    *keySet
}

// registry is the set of clients, by id.
type registry struct {
	byID map[string]*client
	// dummy is verified against when the client id is unknown, so that an unknown id costs the
	// same argon2 run as a wrong secret. It has the parameters of the first client in the file.
	dummy phc
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
		hashing:  make(chan struct{}, min(max(runtime.GOMAXPROCS(0), 1), 4)),
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
		h, err := hashWithParams(DevClientSecret, demoParams)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		i.demo = &client{id: DevClientID, hash: h, services: Services(), permissions: []string{PermAll}}
		if opts.KeysDir == "" {
			if i.ephemeral, err = ephemeralKeys(); err != nil {
				return nil, fmt.Errorf("token: %w", err)
			}
		}
	}
	clients, errC := i.loadClients()
	keys, errK := i.loadKeys()
	if err := errors.Join(errC, errK); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	i.state.Store(&state{clients: clients, keys: keys})
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

// Reload re-reads the clients file and the keys dir. Each is replaced only if it loaded without
// a problem; otherwise the last good one stays and the error says why (file:line for YAML).
// Authenticate and Verify may run concurrently; each sees the old or the new version, whole.
func (i *Issuer) Reload() error {
	i.reload.Lock()
	defer i.reload.Unlock()
	next := *i.state.Load()
	var errs []error
	if c, err := i.loadClients(); err != nil {
		errs = append(errs, err)
	} else {
		next.clients = c
	}
	if k, err := i.loadKeys(); err != nil {
		errs = append(errs, err)
	} else {
		next.keys = k
	}
	i.state.Store(&next)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("token: reload: %w", err)
	}
	return nil
}

func (i *Issuer) loadClients() (*registry, error) {
	var list []*client
	if i.opts.ClientsFile != "" {
		var err error
		if list, err = readClientsFile(i.opts.ClientsFile); err != nil {
			return nil, err
		}
	}
	if len(list) == 0 && i.demo == nil {
		return nil, fmt.Errorf("%s: no clients defined", i.opts.ClientsFile)
	}
	reg := &registry{byID: make(map[string]*client, len(list)+1)}
	for _, c := range list {
		if i.demo != nil && c.id == DevClientID {
			return nil, fmt.Errorf("%s:%d: clientId %q is reserved for the dev-mode demo client", i.opts.ClientsFile, c.line, c.id)
		}
		reg.byID[c.id] = c
	}
	if i.demo != nil {
		list = append(list, i.demo)
		reg.byID[DevClientID] = i.demo
	}
	p := list[0].hash.params
	reg.dummy = phc{params: p, salt: make([]byte, p.saltLen), key: make([]byte, p.keyLen)}
	return reg, nil
}

func (i *Issuer) loadKeys() (*keySet, error) {
	if i.opts.KeysDir == "" {
		return i.ephemeral, nil
	}
	return loadKeys(i.opts.KeysDir)
}

// Authenticate checks a client's credentials and issues a token for service.
//
// Errors: *ThrottledError when a bucket of failures is empty, that of the client id from this
// address, of this address, or of the client id from all addresses (see [ThrottleConfig]; checked
// before any hashing); ErrNotAuthenticated, bare, for an unknown client or a wrong secret alike
// (an unknown id is verified against a dummy hash of the same cost, and throttled the same way);
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
	if wait := i.throttle.take(ck, rk, i.opts.Now()); wait > 0 {
		return Token{}, &ThrottledError{RetryAfter: wait}
	}
	st := i.state.Load()
	c := st.clients.byID[clientID]
	if !i.secretMatches(st.clients, c, secret) {
		return Token{}, ErrNotAuthenticated
	}
	i.throttle.give(ck, rk, i.opts.Now())
	if !c.mayUse(service) {
		return Token{}, fmt.Errorf("%w: client %q has no right on the %s service", ErrPermissionDenied, c.id, service)
	}
	return i.issue(st.keys, c, service)
}

// secretMatches runs exactly one argon2 verification whether or not the client exists.
func (i *Issuer) secretMatches(reg *registry, c *client, secret string) bool {
	h := reg.dummy
	if c != nil {
		h = c.hash
	}
	i.hashing <- struct{}{}
	ok := h.matches(secret)
	<-i.hashing
	return ok && c != nil && secret != ""
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
