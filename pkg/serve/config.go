package serve

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Config is everything a service reads at start, from YARDSTICK_* environment variables and flags
// that take precedence; nothing deeper reads the environment. Each field's variable, flag, default,
// meaning and values are in settings.go's table; the comments here add only why.
type Config struct {
	Service string // Identity.Name

	HTTPAddr string
	GRPCAddr string
	// ProbeAddr's listener has tiny limits of its own: no caller of the main gRPC port can starve
	// the kubelet's probes (grpcguard.NewProbeServer).
	ProbeAddr string

	// GRPCMaxStreams also bounds the handlers a connection can keep running (grpc-go's HTTP/2
	// rapid-reset defence).
	GRPCMaxStreams  int
	GRPCReadTimeout time.Duration // with a token or without
	BatchIdle       time.Duration // both fronts' batch streams

	ContentDir  string
	ClientsFile string
	KeysDir     string
	Dev         bool

	TokenTTL time.Duration
	// KeyLifetime dates the yardstick_signing_key_expiry_timestamp_seconds series (and its
	// alert); keys are never refused for it.
	KeyLifetime time.Duration

	// Reflection is "auto", "true" or "false": the gRPC reflection service tells any caller the
	// whole contract, which a production endpoint need not volunteer.
	Reflection string

	LogFormat string
	LogLevel  string

	// ShutdownDelay lets load balancers take the instance out before connections are refused.
	ShutdownDelay  time.Duration
	ShutdownGrace  time.Duration
	ReloadInterval time.Duration

	// TrustedProxies: the /authToken throttle keys on the rightmost X-Forwarded-For address that
	// is not one of them, which a client cannot forge; empty means the connection's address.
	TrustedProxies []netip.Prefix
	RedisURL       string

	CORSOrigins     []string
	CORSCredentials bool
	CORSMaxAge      time.Duration

	ClientRate        float64
	ClientBurst       int
	ClientConcurrency int
	Replicas          int
	AdmissionWait     time.Duration

	MemoryBudget         int64
	MemoryBudgetFraction float64
	BodyGrace            time.Duration // httpfront.PaceBodies
	MinBodyRate          int64
	// MaxBodyBytes bounds every JSON body and gRPC message of any service (docs/api.md: over it,
	// 413) but those a service bounds itself (Service.Methods), as its own settings bound the rest.
	MaxBodyBytes int64

	// Own is the value the service's own settings fill in (Identity.Settings), for its build.
	Own any
	own Settings // those settings and their checks, which Validate runs with the frame's

	// tokenClock, set by tests only, shortens the tokens' TTL and leeway below what the
	// configuration accepts, so that a test can watch a token expire.
	tokenClock *tokenClock
}

// Identity is what a service tells the frame of itself before its configuration is read: its name
// (the token audience, the name in logs, metrics and -help), default addresses and own settings.
type Identity struct {
	Name     string
	HTTPAddr string
	GRPCAddr string
	// Settings adds the service's own settings (its domain's limits) to s and returns the value
	// they fill in (Config.Own), a new one at each configuration read. nil: none.
	Settings func(s *Settings) any
}

type tokenClock struct{ ttl, leeway time.Duration }

// LoadConfig builds a service's configuration from defaults, then environ (os.Environ()), then
// flags, and validates it. An unknown YARDSTICK_* variable is an error: a misspelt setting fails
// at start instead of being silently ignored.
func LoadConfig(id Identity, args []string, environ []string, usage io.Writer) (Config, error) {
	c := Config{Service: id.Name}
	all := settings(id, &c)
	if id.Settings != nil {
		c.Own = id.Settings(&c.own)
		all = append(all, c.own.list...)
	}
	known, names := make(map[string]setting, len(all)), make([]string, len(all))
	for i, s := range all {
		known[s.env], names[i] = s, s.env
		if err := s.set.apply(s.def); err != nil {
			return Config{}, fmt.Errorf("default of %s: %w", s.env, err)
		}
	}

	var problems []error
	var unknown []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "YARDSTICK_") {
			continue
		}
		s, ok := known[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if err := s.set.apply(value); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		problems = append(problems, fmt.Errorf("unknown setting %s (known: %s)", strings.Join(unknown, ", "), strings.Join(names, ", ")))
	}

	fs := flag.NewFlagSet(id.Name, flag.ContinueOnError)
	fs.SetOutput(usage)
	for _, s := range all {
		fs.Var(&flagValue{s}, s.flag, s.usage)
	}
	version := fs.Bool("version", false, "")
	fs.Usage = func() { printUsage(fs, id.Name, all) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, ErrHelp
		}
		return Config{}, fmt.Errorf("flags: %w", err)
	}
	if *version {
		return Config{}, ErrVersion // before the settings' problems: it needs none of them right
	}
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if err := errors.Join(problems...); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports every problem of the configuration at once, each setting's (settings.go) and
// those between settings.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !serviceName.MatchString(c.Service) {
		bad("service %q: want a name of lower-case letters, digits and hyphens, starting with a letter, at most 32", c.Service)
	}
	for _, s := range append(settings(Identity{}, &c), c.own.list...) {
		if s.set.check == nil {
			continue
		}
		if err := s.set.check(); err != nil {
			bad("%s %w", s.env, err)
		}
	}
	if !c.Dev && c.ClientsFile == "" {
		bad("YARDSTICK_CLIENTS_FILE is required outside dev mode (set YARDSTICK_DEV=true to run with the demo client)")
	}
	if !c.Dev && c.KeysDir == "" {
		bad("YARDSTICK_KEYS_DIR is required outside dev mode (create a key with: yardstick-token keygen -dir DIR)")
	}
	for _, check := range c.own.checks {
		if err := check(c); err != nil {
			errs = append(errs, err)
		}
	}
	c.validateAddrs(bad)
	c.validateCORS(bad)
	return errors.Join(errs...)
}

// serviceName is what may name a service: as a token's audience, a metric label and in log lines,
// it needs no quoting in any of them.
var serviceName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// validateAddrs checks the listen addresses: host:port each, no two the same but for port 0.
func (c Config) validateAddrs(bad func(string, ...any)) {
	addrs := []struct{ name, addr string }{{"YARDSTICK_HTTP_ADDR", c.HTTPAddr}, {"YARDSTICK_GRPC_ADDR", c.GRPCAddr}}
	if c.ProbeAddr != "" {
		addrs = append(addrs, struct{ name, addr string }{"YARDSTICK_PROBE_ADDR", c.ProbeAddr})
	}
	seen := map[string]string{}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			bad("%s %q is not host:port", a.name, a.addr)
			continue
		}
		if other, dup := seen[a.addr]; dup && !strings.HasSuffix(a.addr, ":0") {
			bad("%s and %s are both %q", other, a.name, a.addr)
		}
		seen[a.addr] = a.name
	}
}

// Settings is the table a service adds its own settings to (Identity.Settings), which the frame
// reads, lists after its own in -help and checks as its own, without knowing what they mean.
type Settings struct {
	list   []setting
	checks []func(Config) error
}

// Add adds the setting of environment variable env and flag flag, described by usage in -help,
// of default def (its text, as an operator would write it), parsed and checked by p.
func (s *Settings) Add(env, flag, usage, def string, p Parser) {
	s.list = append(s.list, setting{env: env, flag: flag, usage: usage, def: def, set: p})
}

// Check adds a check between the service's settings and the frame's (the configuration whole),
// which Validate runs after each setting's own; its error is reported as it is.
func (s *Settings) Check(check func(Config) error) { s.checks = append(s.checks, check) }

var (
	// ErrHelp is LoadConfig's answer to -help: the usage is written; stop without an error.
	ErrHelp = errors.New("help requested")
	// ErrVersion is LoadConfig's answer to -version: print Version and stop without an error.
	ErrVersion = errors.New("version requested")
)
