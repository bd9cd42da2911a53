package serve

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// setting is one configuration value in one place: its environment variable, flag, -help text,
// default, and parser into its field; -help is written from them and Config.Validate checks them.
type setting struct {
	env, flag, usage string
	def              string
	set              Parser
}

// Parser turns a setting's text into its field, and checks the field (Int, Bytes). kind names its
// type in -help as the flag package does ("-token-ttl duration"); "" is a boolean, bare (-dev).
type Parser struct {
	kind  string
	apply func(v string) error
	check func() error // nil: any value the text parses to
}

// value is the parser of a field of type T, its error saying what the text is not; want, if
// given, says what the field's value must be, "" when it is.
func value[T any](dst *T, kind, notA string, parse func(string) (T, error), want ...func(T) string) Parser {
	p := Parser{kind: kind, apply: func(v string) error {
		x, err := parse(v)
		if err != nil {
			return fmt.Errorf("%q is not %s", v, notA)
		}
		*dst = x
		return nil
	}}
	if len(want) > 0 {
		p.check = func() error {
			w := want[0](*dst)
			if w == "" {
				return nil
			}
			if s, ok := any(*dst).(string); ok {
				return fmt.Errorf("%q: want %s", s, w)
			}
			return fmt.Errorf("%v: want %s", *dst, w)
		}
	}
	return p
}

// Int is the parser of a whole-number setting; want, if given, says what its value must be.
func Int(dst *int, want ...func(int) string) Parser {
	return value(dst, "int", "a whole number", strconv.Atoi, want...)
}

// Bytes is the parser of a setting that is a number of bytes; want as Int's.
func Bytes(dst *int64, want ...func(int64) string) Parser {
	return value(dst, "int", "a number of bytes", func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }, want...)
}

// Within is the check of a value between lo and hi, both taken (NaN is not); want says so if not.
func Within[T cmp.Ordered](lo, hi T, want string) func(T) string {
	return func(x T) string {
		if x >= lo && x <= hi {
			return ""
		}
		return want
	}
}

// offOr is check with 0 taken too: the setting off, or derived.
func offOr[T cmp.Ordered](check func(T) string) func(T) string {
	return func(x T) string {
		if x == *new(T) {
			return ""
		}
		return check(x)
	}
}

// oneOf is the check of a value among a few, which want lists.
func oneOf(want string, values ...string) func(string) string {
	return func(v string) string {
		if slices.Contains(values, v) {
			return ""
		}
		return want
	}
}

// unsetOr parses a client limit: unset (0) when empty; set, it must be valid (0 is refused).
func unsetOr[T int | float64](parse func(string) (T, error), valid func(T) bool) func(string) (T, error) {
	return func(v string) (T, error) {
		if v == "" {
			return 0, nil
		}
		x, err := parse(v)
		if err == nil && !valid(x) {
			err = errors.New("out of range")
		}
		return x, err
	}
}

// forever is the longest duration: a setting's bounds when only its lower one matters.
const forever = time.Duration(math.MaxInt64)

func settings(id Identity, c *Config) []setting {
	float := func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }
	str := func(dst *string, want ...func(string) string) Parser {
		return value(dst, "string", "", func(v string) (string, error) { return v, nil }, want...)
	}
	dur := func(dst *time.Duration, want ...func(time.Duration) string) Parser {
		return value(dst, "duration", "a duration (e.g. 30s, 24h)", time.ParseDuration, want...)
	}
	boolean := func(dst *bool) Parser { return value(dst, "", "true or false", strconv.ParseBool) }
	// A client limit: a rate > 0, a burst or a concurrency >= 1; 0 (none) only from the empty text.
	positive := func(dst *float64) Parser {
		return value(dst, "float", "a number more than 0 (leave it empty for no limit)",
			unsetOr(float, func(f float64) bool { return f > 0 && !math.IsInf(f, 1) }), Within(0, math.Inf(1), "more than 0, or 0 for none"))
	}
	atLeastOne := func(dst *int) Parser {
		return value(dst, "int", "a whole number of at least 1 (leave it empty for the default)",
			unsetOr(strconv.Atoi, func(n int) bool { return n >= 1 }), Within(0, math.MaxInt, "1 or more, or 0 for none"))
	}
	// The budget stays under GOMEMLIMIT; more than 0 is at least the smallest positive float64.
	fraction := Within(math.SmallestNonzeroFloat64, admission.MaxFraction,
		fmt.Sprintf("more than 0 and at most %v (GOMEMLIMIT is %v of the limit)", admission.MaxFraction, admission.GoMemLimitRatio))
	return []setting{
		{"YARDSTICK_HTTP_ADDR", "http-addr", "listen address of the JSON front, health and metrics", id.HTTPAddr, str(&c.HTTPAddr)},
		{"YARDSTICK_GRPC_ADDR", "grpc-addr", "listen address of the gRPC services", id.GRPCAddr, str(&c.GRPCAddr)},
		{"YARDSTICK_PROBE_ADDR", "probe-addr", "listen address of a gRPC health service for probes alone (empty: none; the main gRPC port serves health too)", "", str(&c.ProbeAddr)},
		{"YARDSTICK_GRPC_MAX_STREAMS", "grpc-max-streams", "most concurrent calls on one gRPC connection", "100", Int(&c.GRPCMaxStreams, Within(1, 10000, "1 to 10000"))},
		{"YARDSTICK_GRPC_READ_TIMEOUT", "grpc-read-timeout", "time a gRPC call has from its headers to send its message whole", "10s", dur(&c.GRPCReadTimeout, Within(100*time.Millisecond, 5*time.Minute, "100ms to 5m"))},
		{"YARDSTICK_BATCH_IDLE", "batch-idle", "time a batch stream (NDJSON or gRPC) may go with no record received and no answer taken before it is ended", "60s", dur(&c.BatchIdle, Within(100*time.Millisecond, time.Hour, "100ms to 1h"))},
		{"YARDSTICK_CONTENT_DIR", "content-dir", "content bundle directory (empty: embedded demonstration bundle)", "", str(&c.ContentDir)},
		{"YARDSTICK_CLIENTS_FILE", "clients-file", "clients YAML file (required unless -dev)", "", str(&c.ClientsFile)},
		{"YARDSTICK_KEYS_DIR", "keys-dir", "directory of Ed25519 signing keys, <kid>.pem (required unless -dev)", "", str(&c.KeysDir)},
		{"YARDSTICK_DEV", "dev", "dev mode: demo client demo/demo-secret, ephemeral key if no keys dir", "false", boolean(&c.Dev)},
		{"YARDSTICK_REFLECTION", "reflection", "gRPC server reflection: auto (on in dev mode only), true or false", "auto", str(&c.Reflection, oneOf("auto, true or false", "auto", "true", "false"))},
		{"YARDSTICK_TOKEN_TTL", "token-ttl", "lifetime of issued tokens", "24h", dur(&c.TokenTTL, Within(time.Minute, 7*24*time.Hour, "between 1m and 168h"))},
		{"YARDSTICK_KEY_LIFETIME", "key-lifetime", "how long a signing key should be used, from the time in its kid; an alert warns before (0: no date)", "2160h", dur(&c.KeyLifetime, offOr(Within(24*time.Hour, 87600*time.Hour, "0 (no date) or between 24h and 87600h (10 years)")))},
		{"YARDSTICK_LOG_FORMAT", "log-format", "log format: json or text", "json", str(&c.LogFormat, oneOf("json or text", "json", "text"))},
		{"YARDSTICK_LOG_LEVEL", "log-level", "log level: debug, info, warn or error", "info", str(&c.LogLevel, logLevel)},
		{"YARDSTICK_SHUTDOWN_DELAY", "shutdown-delay", "time readiness reports draining before listeners stop", "0s", dur(&c.ShutdownDelay, Within(0, forever, "0s or more"))},
		{"YARDSTICK_SHUTDOWN_GRACE", "shutdown-grace", "time in-flight requests may take to finish after SIGTERM", "20s", dur(&c.ShutdownGrace, Within(1, forever, "more than 0s"))},
		{"YARDSTICK_RELOAD_INTERVAL", "reload-interval", "how often content, clients and keys are re-read (0 disables)", "30s", dur(&c.ReloadInterval, Within(0, forever, "0s (no reloads) or more"))},
		{"YARDSTICK_TRUSTED_PROXIES", "trusted-proxies", "comma-separated CIDRs or addresses of proxies in front (the /authToken throttle looks past them in X-Forwarded-For)", "", list(&c.TrustedProxies, prefix)},
		{"YARDSTICK_REDIS_URL", "redis-url", "Redis that shares the /authToken throttle and the clients' rates among replicas, redis://[:password@]host:port[/db] (empty: each process in memory)", "", str(&c.RedisURL)},
		{"YARDSTICK_CORS_ORIGINS", "cors-origins", "comma-separated origins (https://app.example.com) whose web pages may call the JSON API, or * for any (empty: no cross-origin calls)", "", list(&c.CORSOrigins, func(f string) (string, error) { return f, nil })},
		{"YARDSTICK_CORS_CREDENTIALS", "cors-credentials", "answer cross-origin calls with Access-Control-Allow-Credentials: true (cookies, TLS client certificates; not with *)", "false", boolean(&c.CORSCredentials)},
		{"YARDSTICK_CORS_MAX_AGE", "cors-max-age", "how long a browser may cache a preflight's answer (whole seconds, 0s to 24h)", "10m", dur(&c.CORSMaxAge, corsMaxAge)},
		{"YARDSTICK_CLIENT_RATE", "client-rate", "requests per second each client may sustain on this service, all replicas together, unless its clients file entry sets limits.rate (empty: no limit)", "", positive(&c.ClientRate)},
		{"YARDSTICK_CLIENT_BURST", "client-burst", "most requests at once of a client after it idled, unless its entry sets limits.burst (empty: one second of its rate)", "", atLeastOne(&c.ClientBurst)},
		{"YARDSTICK_CLIENT_CONCURRENCY", "client-concurrency", "most calls of a client in progress at once on one replica, streams included, unless its entry sets limits.concurrency (empty: no limit)", "", atLeastOne(&c.ClientConcurrency)},
		{"YARDSTICK_REPLICAS", "replicas", "replicas of this service: without Redis each enforces rate/N and burst/N of every client", "1", Int(&c.Replicas, Within(1, 1000, "1 to 1000"))},
		{"YARDSTICK_ADMISSION_WAIT", "admission-wait", "how long a call that does not fit the memory budget waits in its client's queue before 503 (0: refused at once)", "2s", dur(&c.AdmissionWait, Within(0, time.Minute, "0 (refused at once) to 1m"))},
		{"YARDSTICK_MEMORY_BUDGET", "memory-budget", "bytes of heap the large requests in progress may hold together (0: the fraction below of the container's memory limit, 536870912 without one)", "0", Bytes(&c.MemoryBudget, offOr(Within[int64](1<<20, math.MaxInt64, "0 (derived) or at least 1048576 bytes")))},
		{"YARDSTICK_MEMORY_BUDGET_FRACTION", "memory-budget-fraction", "share of the container's memory limit that is the memory budget", "0.5", value(&c.MemoryBudgetFraction, "float", "a number", float, fraction)},
		{"YARDSTICK_BODY_GRACE", "body-grace", "time a request body may take before the minimum rate applies", "10s", dur(&c.BodyGrace, Within(1, forever, "more than 0s"))},
		{"YARDSTICK_MIN_BODY_RATE", "min-body-rate", "bytes per second a request body must average after the grace (408 below)", "65536", Bytes(&c.MinBodyRate, Within[int64](1, math.MaxInt64, "1 or more"))},
		{"YARDSTICK_MAX_BODY_BYTES", "max-body-bytes", "largest request body", "1048576", Bytes(&c.MaxBodyBytes, Within[int64](1024, math.MaxInt64, "1024 or more"))},
	}
}

// logLevel is the check of a log level: what telemetry.ParseLevel takes.
func logLevel(v string) string {
	if _, err := telemetry.ParseLevel(v); err != nil {
		return "debug, info, warn or error"
	}
	return ""
}

// corsMaxAge: a preflight's answer says it in whole seconds.
func corsMaxAge(d time.Duration) string {
	if d < 0 || d > 24*time.Hour || d%time.Second != 0 {
		return "whole seconds from 0s to 24h"
	}
	return ""
}

// list parses a comma-separated list, its blanks dropped, each item by parse.
func list[T any](dst *[]T, parse func(string) (T, error)) Parser {
	return Parser{kind: "string", apply: func(v string) error {
		var out []T
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			x, err := parse(f)
			if err != nil {
				return err
			}
			out = append(out, x)
		}
		*dst = out
		return nil
	}}
}

// prefix parses a CIDR or an address, an address being the prefix of itself alone.
func prefix(f string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(f)
	if err != nil {
		a, aerr := netip.ParseAddr(f)
		if aerr != nil {
			return p, fmt.Errorf("%q is not a CIDR or an IP address", f)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	return p.Masked(), nil
}

// flagValue routes one flag to its setting.
type flagValue struct{ s setting }

func (v *flagValue) Set(text string) error { return v.s.set.apply(text) }
func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	return v.s.def
}
func (v *flagValue) IsBoolFlag() bool { return v.s.set.kind == "" }

// printUsage writes -help as the flag package does, with each value's type as its placeholder
// instead of the generic "value".
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
