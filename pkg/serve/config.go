package serve

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// Config is everything a service reads at start. It comes from YARDSTICK_* environment variables,
// with command-line flags of the same meaning taking precedence; nothing deeper reads the
// environment.
type Config struct {
	// Service is "scoring" or "forecast": the token audience and the name in logs and metrics.
	Service string

	HTTPAddr string // JSON front, health, metrics, OpenAPI, JWKS
	GRPCAddr string // gRPC services, grpc.health.v1, reflection
	// ProbeAddr, when set, serves grpc.health.v1 alone on its own listener with tiny limits, for
	// the kubelet's probes: no caller of the main gRPC port can starve it (grpcguard.go).
	ProbeAddr string

	// GRPCMaxStreams is the most concurrent calls one gRPC connection may have open; it also
	// bounds the handlers a connection can keep running (grpc-go's HTTP/2 rapid-reset defence).
	GRPCMaxStreams int
	// GRPCReadTimeout is how long a gRPC call that sends one message has, from its headers, to
	// send that message whole, token or not.
	GRPCReadTimeout time.Duration

	ContentDir  string // content bundle directory; "" = the embedded demonstration bundle
	ClientsFile string // clients YAML; required unless Dev
	KeysDir     string // Ed25519 signing keys; required unless Dev (then an ephemeral key)
	Dev         bool   // demo client demo/demo-secret; ephemeral key when KeysDir is empty

	TokenTTL time.Duration

	// Reflection is "auto" (on in dev mode only), "true" or "false": the gRPC reflection service
	// tells any caller the whole contract, which a production endpoint need not volunteer.
	Reflection string

	LogFormat string // json or text
	LogLevel  string // debug, info, warn or error

	// ShutdownDelay is how long readiness reports "draining" before the listeners stop, so load
	// balancers take the instance out before connections are refused.
	ShutdownDelay time.Duration
	// ShutdownGrace bounds how long in-flight requests may take to finish after SIGTERM.
	ShutdownGrace time.Duration
	// ReloadInterval is how often the content, clients and keys files are re-read; 0 disables.
	ReloadInterval time.Duration

	// TrustedProxies are the addresses of proxies in front of the service (an ingress
	// controller's pods). The /authToken throttle keys on the rightmost X-Forwarded-For address
	// that is not one of them, which a client cannot forge; empty means the connection's address.
	TrustedProxies []netip.Prefix
	// RedisURL shares the /authToken throttle among replicas through Redis; "" keeps it in memory.
	RedisURL string

	// MemoryBudget is how many bytes of heap the requests in progress whose cost grows with their
	// size may hold together (internal/admission); beyond it they are answered 503 / ResourceExhausted.
	// 0 derives it: MemoryBudgetFraction of the container's memory limit, DefaultMemoryBudget
	// when there is none.
	MemoryBudget         int64
	MemoryBudgetFraction float64
	// BodyGrace and MinBodyRate pace request bodies (bodyrate.go): after BodyGrace, a body must
	// have arrived at MinBodyRate bytes per second on average, or it is cut with 408.
	BodyGrace   time.Duration
	MinBodyRate int64

	Limits Limits
}

// Limits bound what one request may ask for (docs/api.md). Over-limit requests get 413 (body) or a
// 400 naming the field.
type Limits struct {
	MaxBodyBytes      int64 // every JSON body but group forecasts
	MaxGroupBodyBytes int64 // group forecast bodies: 100,000 students do not fit in 1 MiB
	MaxItems          int
	MaxStudents       int
	MaxCutLevels      int
}

// setting is one configuration value: its environment variable, its flag and where it lands.
type setting struct {
	env, flag, usage string
	def              string
	set              parser
}

// parser turns a setting's text into its field. kind names the value's type in -help the way the
// flag package names its own ("-http-addr string", "-token-ttl duration"); "" is a boolean, which
// is given bare (-dev) or as -dev=false.
type parser struct {
	kind  string
	apply func(c *Config, v string) error
}

func settings(service string) []setting {
	httpDef, grpcDef := ":8080", ":9090"
	if service == "forecast" {
		httpDef, grpcDef = ":8081", ":9091"
	}
	str := func(dst func(c *Config) *string) parser {
		return parser{"string", func(c *Config, v string) error { *dst(c) = v; return nil }}
	}
	dur := func(dst func(c *Config) *time.Duration) parser {
		return parser{"duration", func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 30s, 24h)", v)
			}
			*dst(c) = d
			return nil
		}}
	}
	boolean := func(dst func(c *Config) *bool) parser {
		return parser{"", func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*dst(c) = b
			return nil
		}}
	}
	integer := func(dst func(c *Config) *int) parser {
		return parser{"int", func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", v)
			}
			*dst(c) = n
			return nil
		}}
	}
	bytes := func(dst func(c *Config) *int64) parser {
		return parser{"int", func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number of bytes", v)
			}
			*dst(c) = n
			return nil
		}}
	}
	fraction := func(dst func(c *Config) *float64) parser {
		return parser{"float", func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			*dst(c) = f
			return nil
		}}
	}
	prefixes := func(dst func(c *Config) *[]netip.Prefix) parser {
		return parser{"string", func(c *Config, v string) error {
			var out []netip.Prefix
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				p, err := netip.ParsePrefix(f)
				if err != nil {
					a, aerr := netip.ParseAddr(f)
					if aerr != nil {
						return fmt.Errorf("%q is not a CIDR or an IP address", f)
					}
					p = netip.PrefixFrom(a, a.BitLen())
				}
				out = append(out, p.Masked())
			}
			*dst(c) = out
			return nil
		}}
	}
	return []setting{
		{"YARDSTICK_HTTP_ADDR", "http-addr", "listen address of the JSON front, health and metrics", httpDef, str(func(c *Config) *string { return &c.HTTPAddr })},
		{"YARDSTICK_GRPC_ADDR", "grpc-addr", "listen address of the gRPC services", grpcDef, str(func(c *Config) *string { return &c.GRPCAddr })},
		{"YARDSTICK_PROBE_ADDR", "probe-addr", "listen address of a gRPC health service for probes alone (empty: none; the main gRPC port serves health too)", "", str(func(c *Config) *string { return &c.ProbeAddr })},
		{"YARDSTICK_GRPC_MAX_STREAMS", "grpc-max-streams", "most concurrent calls on one gRPC connection", "100", integer(func(c *Config) *int { return &c.GRPCMaxStreams })},
		{"YARDSTICK_GRPC_READ_TIMEOUT", "grpc-read-timeout", "time a gRPC call has from its headers to send its message whole", "10s", dur(func(c *Config) *time.Duration { return &c.GRPCReadTimeout })},
		{"YARDSTICK_CONTENT_DIR", "content-dir", "content bundle directory (empty: embedded demonstration bundle)", "", str(func(c *Config) *string { return &c.ContentDir })},
		{"YARDSTICK_CLIENTS_FILE", "clients-file", "clients YAML file (required unless -dev)", "", str(func(c *Config) *string { return &c.ClientsFile })},
		{"YARDSTICK_KEYS_DIR", "keys-dir", "directory of Ed25519 signing keys, <kid>.pem (required unless -dev)", "", str(func(c *Config) *string { return &c.KeysDir })},
		{"YARDSTICK_DEV", "dev", "dev mode: demo client demo/demo-secret, ephemeral key if no keys dir", "false", boolean(func(c *Config) *bool { return &c.Dev })},
		{"YARDSTICK_REFLECTION", "reflection", "gRPC server reflection: auto (on in dev mode only), true or false", "auto", str(func(c *Config) *string { return &c.Reflection })},
		{"YARDSTICK_TOKEN_TTL", "token-ttl", "lifetime of issued tokens", "24h", dur(func(c *Config) *time.Duration { return &c.TokenTTL })},
		{"YARDSTICK_LOG_FORMAT", "log-format", "log format: json or text", "json", str(func(c *Config) *string { return &c.LogFormat })},
		{"YARDSTICK_LOG_LEVEL", "log-level", "log level: debug, info, warn or error", "info", str(func(c *Config) *string { return &c.LogLevel })},
		{"YARDSTICK_SHUTDOWN_DELAY", "shutdown-delay", "time readiness reports draining before listeners stop", "0s", dur(func(c *Config) *time.Duration { return &c.ShutdownDelay })},
		{"YARDSTICK_SHUTDOWN_GRACE", "shutdown-grace", "time in-flight requests may take to finish after SIGTERM", "20s", dur(func(c *Config) *time.Duration { return &c.ShutdownGrace })},
		{"YARDSTICK_RELOAD_INTERVAL", "reload-interval", "how often content, clients and keys are re-read (0 disables)", "30s", dur(func(c *Config) *time.Duration { return &c.ReloadInterval })},
		{"YARDSTICK_TRUSTED_PROXIES", "trusted-proxies", "comma-separated CIDRs or addresses of proxies in front (the /authToken throttle looks past them in X-Forwarded-For)", "", prefixes(func(c *Config) *[]netip.Prefix { return &c.TrustedProxies })},
		{"YARDSTICK_REDIS_URL", "redis-url", "Redis that shares the /authToken throttle among replicas, redis://[:password@]host:port[/db] (empty: each process in memory)", "", str(func(c *Config) *string { return &c.RedisURL })},
		{"YARDSTICK_MEMORY_BUDGET", "memory-budget", "bytes of heap the large requests in progress may hold together (0: the fraction below of the container's memory limit, 536870912 without one)", "0", bytes(func(c *Config) *int64 { return &c.MemoryBudget })},
		{"YARDSTICK_MEMORY_BUDGET_FRACTION", "memory-budget-fraction", "share of the container's memory limit that is the memory budget", "0.5", fraction(func(c *Config) *float64 { return &c.MemoryBudgetFraction })},
		{"YARDSTICK_BODY_GRACE", "body-grace", "time a request body may take before the minimum rate applies", "10s", dur(func(c *Config) *time.Duration { return &c.BodyGrace })},
		{"YARDSTICK_MIN_BODY_RATE", "min-body-rate", "bytes per second a request body must average after the grace (408 below)", "65536", bytes(func(c *Config) *int64 { return &c.MinBodyRate })},
		{"YARDSTICK_MAX_BODY_BYTES", "max-body-bytes", "largest request body", "1048576", bytes(func(c *Config) *int64 { return &c.Limits.MaxBodyBytes })},
		{"YARDSTICK_MAX_GROUP_BODY_BYTES", "max-group-body-bytes", "largest group forecast request body", "16777216", bytes(func(c *Config) *int64 { return &c.Limits.MaxGroupBodyBytes })},
		{"YARDSTICK_MAX_ITEMS", "max-items", "most items in one scoring request", "5000", integer(func(c *Config) *int { return &c.Limits.MaxItems })},
		{"YARDSTICK_MAX_STUDENTS", "max-students", "most students in one group forecast", "100000", integer(func(c *Config) *int { return &c.Limits.MaxStudents })},
		{"YARDSTICK_MAX_CUT_LEVELS", "max-cut-levels", "most cut levels in one forecast", "20", integer(func(c *Config) *int { return &c.Limits.MaxCutLevels })},
	}
}

// ReflectionOn reports whether the gRPC reflection service is served.
func (c Config) ReflectionOn() bool {
	return c.Reflection == "true" || (c.Reflection == "auto" && c.Dev)
}

// LoadConfig builds the configuration of a service from defaults, then the environment, then
// flags, and validates it. environ is os.Environ(); an unknown YARDSTICK_* variable is an error, so
// a misspelt setting in a manifest fails at start instead of being silently ignored.
func LoadConfig(service string, args []string, environ []string, usage io.Writer) (Config, error) {
	c := Config{Service: service}
	all := settings(service)
	known := make(map[string]setting, len(all))
	for _, s := range all {
		known[s.env] = s
		if err := s.set.apply(&c, s.def); err != nil {
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
		if err := s.set.apply(&c, value); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		problems = append(problems, fmt.Errorf("unknown setting %s (known: %s)", strings.Join(unknown, ", "), knownNames(all)))
	}

	fs := flag.NewFlagSet(service, flag.ContinueOnError)
	fs.SetOutput(usage)
	for _, s := range all {
		fs.Var(&flagValue{s: s, c: &c}, s.flag, s.usage)
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

func knownNames(all []setting) string {
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.env
	}
	return strings.Join(names, ", ")
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Service != "scoring" && c.Service != "forecast" {
		bad("service %q: want scoring or forecast", c.Service)
	}
	c.validateAddrs(bad)
	if c.GRPCMaxStreams < 1 || c.GRPCMaxStreams > 10000 {
		bad("YARDSTICK_GRPC_MAX_STREAMS %d: want 1 to 10000", c.GRPCMaxStreams)
	}
	if c.GRPCReadTimeout < 100*time.Millisecond || c.GRPCReadTimeout > 5*time.Minute {
		bad("YARDSTICK_GRPC_READ_TIMEOUT %s: want 100ms to 5m", c.GRPCReadTimeout)
	}
	if !c.Dev && c.ClientsFile == "" {
		bad("YARDSTICK_CLIENTS_FILE is required outside dev mode (set YARDSTICK_DEV=true to run with the demo client)")
	}
	if !c.Dev && c.KeysDir == "" {
		bad("YARDSTICK_KEYS_DIR is required outside dev mode (create a key with: yardstick-token keygen -dir DIR)")
	}
	if c.TokenTTL < time.Minute || c.TokenTTL > 7*24*time.Hour {
		bad("YARDSTICK_TOKEN_TTL %s: want between 1m and 168h", c.TokenTTL)
	}
	if c.Reflection != "auto" && c.Reflection != "true" && c.Reflection != "false" {
		bad("YARDSTICK_REFLECTION %q: want auto, true or false", c.Reflection)
	}
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
	if c.MemoryBudget < 0 || (c.MemoryBudget > 0 && c.MemoryBudget < 1<<20) {
		bad("YARDSTICK_MEMORY_BUDGET %d: want 0 (derived) or at least 1048576 bytes", c.MemoryBudget)
	}
	if !(c.MemoryBudgetFraction > 0 && c.MemoryBudgetFraction <= admission.MaxFraction) {
		bad("YARDSTICK_MEMORY_BUDGET_FRACTION %v: want more than 0 and at most %v (GOMEMLIMIT is %v of the limit)", c.MemoryBudgetFraction, admission.MaxFraction, admission.GoMemLimitRatio)
	}
	if c.BodyGrace <= 0 || c.MinBodyRate < 1 {
		bad("YARDSTICK_BODY_GRACE must be > 0 and YARDSTICK_MIN_BODY_RATE >= 1")
	}
	l := c.Limits
	if l.MaxBodyBytes < 1024 || l.MaxGroupBodyBytes < l.MaxBodyBytes {
		bad("YARDSTICK_MAX_BODY_BYTES must be >= 1024 and YARDSTICK_MAX_GROUP_BODY_BYTES >= it")
	}
	if l.MaxItems < 1 || l.MaxStudents < 1 || l.MaxCutLevels < 1 {
		bad("YARDSTICK_MAX_ITEMS, YARDSTICK_MAX_STUDENTS and YARDSTICK_MAX_CUT_LEVELS must be >= 1")
	}
	return errors.Join(errs...)
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

// flagValue routes one flag to its setting. IsBoolFlag lets a boolean be given bare (-dev).
type flagValue struct {
	s setting
	c *Config
}

func (v *flagValue) Set(text string) error { return v.s.set.apply(v.c, text) }
func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	return v.s.def
}
func (v *flagValue) IsBoolFlag() bool { return v.s.set.kind == "" }

// printUsage writes -help the way the flag package does, with each value's type as its
// placeholder ("-token-ttl duration"; a boolean has none) instead of the generic "value".
func printUsage(fs *flag.FlagSet, service string, all []setting) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage of %s:\n", service)
	fmt.Fprintf(w, "Each flag overrides the environment variable named beside it.\n")
	for _, s := range all {
		name := "-" + s.flag
		if s.set.kind != "" {
			name += " " + s.set.kind
		}
		fmt.Fprintf(w, "  %s\n    \t%s (env %s, default %q)\n", name, s.usage, s.env, s.def)
	}
	fmt.Fprintf(w, "  -version\n    \tprint the build version and exit\n")
}

// routes is what the route table needs of the limits.
func (l Limits) routes() routes.Limits {
	return routes.Limits{MaxBodyBytes: l.MaxBodyBytes, MaxGroupBodyBytes: l.MaxGroupBodyBytes, MaxStudents: l.MaxStudents}
}
