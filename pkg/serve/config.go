package serve

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// Config is everything a service reads at start. It comes from YARDSTICK_* environment variables,
// with command-line flags of the same meaning taking precedence; nothing deeper reads the
// environment. Each field's variable, flag, default and meaning are in settings.go's table, which
// -help prints; the comments here add only what the table does not say.
type Config struct {
	// Service is the service's name (Identity.Name): the token audience and the name in logs and
	// metrics.
	Service string

	HTTPAddr string
	GRPCAddr string
	// ProbeAddr's listener has tiny limits of its own: no caller of the main gRPC port can starve
	// the kubelet's probes (grpcguard.NewProbeServer).
	ProbeAddr string

	// GRPCMaxStreams also bounds the handlers a connection can keep running (grpc-go's HTTP/2
	// rapid-reset defence).
	GRPCMaxStreams  int
	GRPCReadTimeout time.Duration // with a token or without

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

	// CORSOrigins are the origins whose pages may call the JSON front (cors.go); empty: none,
	// and the front answers as if CORS did not exist.
	CORSOrigins     []string
	CORSCredentials bool
	CORSMaxAge      time.Duration

	// ClientRate, ClientBurst and ClientConcurrency are the limits of a client whose clients
	// file entry does not set its own (internal/quota); 0 is unset.
	ClientRate        float64
	ClientBurst       int
	ClientConcurrency int
	// Replicas: without Redis each replica enforces a client's rate/Replicas and burst/Replicas,
	// so together they give about its rate.
	Replicas      int
	AdmissionWait time.Duration // the client queues are served round-robin

	// MemoryBudget bounds the heap of the requests in progress whose cost grows with their size
	// (internal/admission). 0 derives it: MemoryBudgetFraction of the container's memory limit,
	// DefaultMemoryBudget when there is none.
	MemoryBudget         int64
	MemoryBudgetFraction float64
	BodyGrace            time.Duration // httpfront.PaceBodies
	MinBodyRate          int64

	Limits Limits

	// tokenClock, set by tests only, shortens the tokens' life (TTL and leeway) below what the
	// configuration accepts, so that a token's expiry can be watched in a test.
	tokenClock *tokenClock
}

// Identity is what a service tells the frame of itself before its configuration is read: its
// name (the token audience, the name in logs, metrics and -help) and the addresses it listens on
// unless YARDSTICK_HTTP_ADDR and YARDSTICK_GRPC_ADDR say otherwise. The frame knows no service:
// each one's main passes its own.
type Identity struct {
	Name     string
	HTTPAddr string
	GRPCAddr string
}

// tokenClock is a token lifetime and leeway for tests.
type tokenClock struct{ ttl, leeway time.Duration }

// Limits bound what one request may ask for (docs/api.md). Over-limit requests get 413 (body) or a
// 400 naming the field. The route table reads them, so they are its type.
type Limits = routes.Limits

// ReflectionOn reports whether the gRPC reflection service is served.
func (c Config) ReflectionOn() bool {
	return c.Reflection == "true" || (c.Reflection == "auto" && c.Dev)
}

// LoadConfig builds the configuration of a service from defaults, then the environment, then
// flags, and validates it. environ is os.Environ(); an unknown YARDSTICK_* variable is an error, so
// a misspelt setting in a manifest fails at start instead of being silently ignored.
func LoadConfig(id Identity, args []string, environ []string, usage io.Writer) (Config, error) {
	service := id.Name
	c := Config{Service: service}
	all := settings(id, &c)
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

	fs := flag.NewFlagSet(service, flag.ContinueOnError)
	fs.SetOutput(usage)
	for _, s := range all {
		fs.Var(&flagValue{s}, s.flag, s.usage)
	}
	version := fs.Bool("version", false, "")
	fs.Usage = func() { printUsage(fs, service, all) }
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

// Validate reports every problem of the configuration at once, area by area.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !validName(c.Service) {
		bad("service %q: want a name of lower-case letters, digits and hyphens, starting with a letter, at most 32", c.Service)
	}
	c.validateAddrs(bad)
	c.validateCORS(bad)
	c.validateGRPC(bad)
	c.validateTokens(bad)
	c.validateOperations(bad)
	c.validateMemory(bad)
	c.validateClients(bad)
	validateLimits(c.Limits, bad)
	return errors.Join(errs...)
}

// validName reports whether name may name a service: it is a token's audience, a metric label
// and part of a log line, so it is kept to what needs no quoting in any of them.
func validName(name string) bool {
	if name == "" || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// validateGRPC checks the gRPC door's own limits.
func (c Config) validateGRPC(bad func(string, ...any)) {
	if c.GRPCMaxStreams < 1 || c.GRPCMaxStreams > 10000 {
		bad("YARDSTICK_GRPC_MAX_STREAMS %d: want 1 to 10000", c.GRPCMaxStreams)
	}
	if c.GRPCReadTimeout < 100*time.Millisecond || c.GRPCReadTimeout > 5*time.Minute {
		bad("YARDSTICK_GRPC_READ_TIMEOUT %s: want 100ms to 5m", c.GRPCReadTimeout)
	}
}

// validateTokens checks the clients, keys and tokens, and what the gRPC side tells of the
// contract.
func (c Config) validateTokens(bad func(string, ...any)) {
	if !c.Dev && c.ClientsFile == "" {
		bad("YARDSTICK_CLIENTS_FILE is required outside dev mode (set YARDSTICK_DEV=true to run with the demo client)")
	}
	if !c.Dev && c.KeysDir == "" {
		bad("YARDSTICK_KEYS_DIR is required outside dev mode (create a key with: yardstick-token keygen -dir DIR)")
	}
	if c.TokenTTL < time.Minute || c.TokenTTL > 7*24*time.Hour {
		bad("YARDSTICK_TOKEN_TTL %s: want between 1m and 168h", c.TokenTTL)
	}
	if c.KeyLifetime != 0 && (c.KeyLifetime < 24*time.Hour || c.KeyLifetime > 87600*time.Hour) {
		bad("YARDSTICK_KEY_LIFETIME %s: want 0 (no date) or between 24h and 87600h (10 years)", c.KeyLifetime)
	}
	if c.Reflection != "auto" && c.Reflection != "true" && c.Reflection != "false" {
		bad("YARDSTICK_REFLECTION %q: want auto, true or false", c.Reflection)
	}
}

// validateOperations checks the logs, the shutdown and the reloads.
func (c Config) validateOperations(bad func(string, ...any)) {
	if c.LogFormat != "json" && c.LogFormat != "text" {
		bad("YARDSTICK_LOG_FORMAT %q: want json or text", c.LogFormat)
	}
	if _, err := telemetry.ParseLevel(c.LogLevel); err != nil {
		bad("YARDSTICK_LOG_LEVEL: %v", err)
	}
	if c.ShutdownDelay < 0 || c.ShutdownGrace <= 0 {
		bad("YARDSTICK_SHUTDOWN_DELAY must be >= 0 and YARDSTICK_SHUTDOWN_GRACE > 0")
	}
	if c.ReloadInterval < 0 {
		bad("YARDSTICK_RELOAD_INTERVAL must be >= 0")
	}
}

// validateMemory checks the memory budget and the pacing of bodies.
func (c Config) validateMemory(bad func(string, ...any)) {
	if c.MemoryBudget < 0 || (c.MemoryBudget > 0 && c.MemoryBudget < 1<<20) {
		bad("YARDSTICK_MEMORY_BUDGET %d: want 0 (derived) or at least 1048576 bytes", c.MemoryBudget)
	}
	if !(c.MemoryBudgetFraction > 0 && c.MemoryBudgetFraction <= admission.MaxFraction) {
		bad("YARDSTICK_MEMORY_BUDGET_FRACTION %v: want more than 0 and at most %v (GOMEMLIMIT is %v of the limit)", c.MemoryBudgetFraction, admission.MaxFraction, admission.GoMemLimitRatio)
	}
	if c.BodyGrace <= 0 || c.MinBodyRate < 1 {
		bad("YARDSTICK_BODY_GRACE must be > 0 and YARDSTICK_MIN_BODY_RATE >= 1")
	}
}

// validateClients checks the clients' default limits and how they are shared.
func (c Config) validateClients(bad func(string, ...any)) {
	if c.ClientRate < 0 || c.ClientBurst < 0 || c.ClientConcurrency < 0 {
		bad("YARDSTICK_CLIENT_RATE, _BURST and _CONCURRENCY must be more than 0, or empty for none")
	}
	if c.Replicas < 1 || c.Replicas > 1000 {
		bad("YARDSTICK_REPLICAS %d: want 1 to 1000", c.Replicas)
	}
	if c.AdmissionWait < 0 || c.AdmissionWait > time.Minute {
		bad("YARDSTICK_ADMISSION_WAIT %s: want 0 (refused at once) to 1m", c.AdmissionWait)
	}
}

// validateLimits checks the limits of one request.
func validateLimits(l Limits, bad func(string, ...any)) {
	if l.MaxBodyBytes < 1024 || l.MaxGroupBodyBytes < l.MaxBodyBytes {
		bad("YARDSTICK_MAX_BODY_BYTES must be >= 1024 and YARDSTICK_MAX_GROUP_BODY_BYTES >= it")
	}
	if l.MaxItems < 1 || l.MaxStudents < 1 || l.MaxCutLevels < 1 {
		bad("YARDSTICK_MAX_ITEMS, YARDSTICK_MAX_STUDENTS and YARDSTICK_MAX_CUT_LEVELS must be >= 1")
	}
}

// validateAddrs checks the listen addresses: host:port each, no two the same (port 0 excepted:
// each listen picks its own).
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

// ErrHelp is LoadConfig's answer to -help or -h: the usage has been written and the caller should
// stop without an error (Main returns nil, so the process exits 0, as Go commands do).
var ErrHelp = errors.New("help requested")

// ErrVersion is LoadConfig's answer to -version: the caller prints Version and stops without an
// error.
var ErrVersion = errors.New("version requested")
