package serve

import (
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// loadCase is one LoadConfig case: a service, its environment and arguments, and either a check
// of the configuration or the fragments its error must mention.
type loadCase struct {
	name    string
	service string
	env     []string
	args    []string
	check   func(t *testing.T, c Config)
	wantErr []string // every fragment must appear in the error
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dev := []string{"YARDSTICK_DEV=true"}
	runLoadCases(t, []loadCase{
		{name: "scoring defaults", service: "scoring", env: dev, check: func(t *testing.T, c Config) {
			if c.HTTPAddr != ":8080" || c.GRPCAddr != ":9090" || c.TokenTTL != 24*time.Hour || c.LogFormat != "json" ||
				c.MaxBodyBytes != 1<<20 || *limitsOf(c) != fakeDefaults {
				t.Errorf("got %+v; want docs/operations.md's Configuration defaults for scoring", c)
			}
		}},
		{name: "forecast defaults", service: "forecast", env: dev, check: func(t *testing.T, c Config) {
			if c.HTTPAddr != ":8081" || c.GRPCAddr != ":9091" {
				t.Errorf("got %s %s; want :8081 :9091", c.HTTPAddr, c.GRPCAddr)
			}
		}},
		{name: "env sets, flags win", service: "scoring",
			env:  []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=:7000", "YARDSTICK_TOKEN_TTL=1h", "PATH=/bin"},
			args: []string{"-http-addr", ":7001", "-log-format=text"},
			check: func(t *testing.T, c Config) {
				if c.HTTPAddr != ":7001" || c.TokenTTL != time.Hour || c.LogFormat != "text" {
					t.Errorf("got %s %s %s; want :7001 1h text", c.HTTPAddr, c.TokenTTL, c.LogFormat)
				}
			}},
		{name: "production needs clients and keys", service: "scoring",
			wantErr: []string{"YARDSTICK_CLIENTS_FILE is required", "YARDSTICK_KEYS_DIR is required"}},
		{name: "production with files", service: "scoring", env: []string{"YARDSTICK_CLIENTS_FILE=/c.yaml", "YARDSTICK_KEYS_DIR=/k"},
			check: func(t *testing.T, c Config) {
				if c.Dev || c.ClientsFile != "/c.yaml" || c.KeysDir != "/k" {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "misspelt env name", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_CONTNET_DIR=/x"},
			wantErr: []string{"unknown setting YARDSTICK_CONTNET_DIR"}},
		{name: "bad values, all reported", service: "scoring",
			env:     []string{"YARDSTICK_DEV=maybe", "YARDSTICK_TOKEN_TTL=forever", "YARDSTICK_MAX_ITEMS=many"},
			wantErr: []string{"YARDSTICK_DEV", "YARDSTICK_TOKEN_TTL", "YARDSTICK_MAX_ITEMS"}},
		{name: "invalid combination", service: "scoring",
			env:     []string{"YARDSTICK_DEV=true", "YARDSTICK_LOG_FORMAT=xml", "YARDSTICK_HTTP_ADDR=nope", "YARDSTICK_MAX_CUT_LEVELS=0", "YARDSTICK_TOKEN_TTL=1s"},
			wantErr: []string{"YARDSTICK_LOG_FORMAT", "YARDSTICK_HTTP_ADDR", "YARDSTICK_MAX_CUT_LEVELS", "YARDSTICK_TOKEN_TTL"}},
		{name: "key lifetime: 90 days by default", service: "scoring", env: dev, check: func(t *testing.T, c Config) {
			if c.KeyLifetime != 2160*time.Hour {
				t.Errorf("got %s; want 2160h", c.KeyLifetime)
			}
		}},
		{name: "key lifetime at its bounds and off", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_KEY_LIFETIME=24h"},
			check: func(t *testing.T, c Config) {
				if c.KeyLifetime != 24*time.Hour {
					t.Errorf("got %s; want 24h", c.KeyLifetime)
				}
			}},
		{name: "key lifetime at its upper bound", service: "scoring", env: dev, args: []string{"-key-lifetime", "87600h"},
			check: func(t *testing.T, c Config) {
				if c.KeyLifetime != 87600*time.Hour {
					t.Errorf("got %s; want 87600h", c.KeyLifetime)
				}
			}},
		{name: "key lifetime off", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_KEY_LIFETIME=0s"},
			check: func(t *testing.T, c Config) {
				if c.KeyLifetime != 0 {
					t.Errorf("got %s; want 0", c.KeyLifetime)
				}
			}},
		{name: "key lifetime past its bounds", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_KEY_LIFETIME=23h59m59s"},
			wantErr: []string{"YARDSTICK_KEY_LIFETIME 23h59m59s"}},
		{name: "key lifetime past its upper bound", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_KEY_LIFETIME=87600h0m1s"},
			wantErr: []string{"YARDSTICK_KEY_LIFETIME 87600h0m1s"}},
		{name: "trusted proxies: CIDRs and addresses, host bits masked, blanks dropped", service: "scoring",
			env: []string{"YARDSTICK_DEV=true", "YARDSTICK_TRUSTED_PROXIES= 10.1.2.3/8 ,192.168.1.7,,2001:db8::1/64"},
			check: func(t *testing.T, c Config) {
				want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("2001:db8::/64")}
				if !slices.Equal(c.TrustedProxies, want) {
					t.Errorf("got %v; want %v", c.TrustedProxies, want)
				}
			}},
		{name: "trusted proxies: none by default", service: "scoring", env: dev, check: func(t *testing.T, c Config) {
			if c.TrustedProxies != nil {
				t.Errorf("got %v; want none", c.TrustedProxies)
			}
		}},
		{name: "trusted proxies: not an address", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_TRUSTED_PROXIES=10.0.0.0/8,10.0.0.300"},
			wantErr: []string{`YARDSTICK_TRUSTED_PROXIES: "10.0.0.300" is not a CIDR or an IP address`}},
		{name: "unknown flag", service: "scoring", env: dev, args: []string{"-nope"}, wantErr: []string{"flags"}},
		{name: "stray argument", service: "scoring", env: dev, args: []string{"extra"}, wantErr: []string{"unexpected arguments: extra"}},
	})
}

// TestLoadConfigName: the frame takes any service's name and ports from its Identity, within
// what a token audience and a metric label hold.
func TestLoadConfigName(t *testing.T) {
	t.Parallel()
	dev := []string{"YARDSTICK_DEV=true"}
	named := func(want string) func(*testing.T, Config) {
		return func(t *testing.T, c Config) {
			if c.Service != want || c.HTTPAddr != ":8080" || c.GRPCAddr != ":9090" {
				t.Errorf("got %q on %s %s; want %q on the identity's :8080 :9090", c.Service, c.HTTPAddr, c.GRPCAddr, want)
			}
		}
	}
	long := strings.Repeat("a", 32)
	runLoadCases(t, []loadCase{
		{name: "one letter", service: "a", env: dev, check: named("a")},
		{name: "a new service", service: "throwaway-2", env: dev, check: named("throwaway-2")},
		{name: "32 characters", service: long, env: dev, check: named(long)},
		{name: "33 characters", service: long + "a", env: dev, wantErr: []string{`service "` + long + `a"`}},
		{name: "empty", service: "", env: dev, wantErr: []string{`service ""`}},
		{name: "upper case", service: "Scoring", env: dev, wantErr: []string{`service "Scoring"`}},
		{name: "starts with a digit", service: "9lives", env: dev, wantErr: []string{`service "9lives"`}},
		{name: "a space", service: "sc oring", env: dev, wantErr: []string{`service "sc oring"`}},
	})
}

// TestLoadConfigGRPC: the gRPC transport's settings at and past their bounds, and the probe's address.
func TestLoadConfigGRPC(t *testing.T) {
	t.Parallel()
	dev := []string{"YARDSTICK_DEV=true"}
	runLoadCases(t, []loadCase{
		{name: "gRPC door defaults", service: "forecast", env: dev, check: func(t *testing.T, c Config) {
			if c.GRPCMaxStreams != 100 || c.GRPCReadTimeout != 10*time.Second || c.ProbeAddr != "" {
				t.Errorf("got streams %d, read timeout %s, probe %q; want 100, 10s, none", c.GRPCMaxStreams, c.GRPCReadTimeout, c.ProbeAddr)
			}
		}},
		{name: "gRPC door at its bounds", service: "forecast", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_GRPC_MAX_STREAMS=1", "YARDSTICK_GRPC_READ_TIMEOUT=100ms", "YARDSTICK_PROBE_ADDR=:9191"},
			check: func(t *testing.T, c Config) {
				if c.GRPCMaxStreams != 1 || c.GRPCReadTimeout != 100*time.Millisecond || c.ProbeAddr != ":9191" {
					t.Errorf("got %d %s %q; want 1 100ms :9191", c.GRPCMaxStreams, c.GRPCReadTimeout, c.ProbeAddr)
				}
			}},
		{name: "gRPC door at its upper bounds", service: "forecast", env: dev, args: []string{"-grpc-max-streams", "10000", "-grpc-read-timeout", "5m"},
			check: func(t *testing.T, c Config) {
				if c.GRPCMaxStreams != 10000 || c.GRPCReadTimeout != 5*time.Minute {
					t.Errorf("got %d %s; want 10000 5m", c.GRPCMaxStreams, c.GRPCReadTimeout)
				}
			}},
		{name: "gRPC door past its bounds", service: "forecast", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_GRPC_MAX_STREAMS=0", "YARDSTICK_GRPC_READ_TIMEOUT=99ms"},
			wantErr: []string{"YARDSTICK_GRPC_MAX_STREAMS 0", "YARDSTICK_GRPC_READ_TIMEOUT 99ms"}},
		{name: "gRPC door past its upper bounds", service: "forecast", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_GRPC_MAX_STREAMS=10001", "YARDSTICK_GRPC_READ_TIMEOUT=5m1s"},
			wantErr: []string{"YARDSTICK_GRPC_MAX_STREAMS 10001", "YARDSTICK_GRPC_READ_TIMEOUT 5m1s"}},
		{name: "probe on the gRPC port", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_PROBE_ADDR=:9090"},
			wantErr: []string{`YARDSTICK_GRPC_ADDR and YARDSTICK_PROBE_ADDR are both ":9090"`}},
		{name: "probe not host:port", service: "scoring", env: []string{"YARDSTICK_DEV=true", "YARDSTICK_PROBE_ADDR=9190"},
			wantErr: []string{`YARDSTICK_PROBE_ADDR "9190" is not host:port`}},
	})
}

// TestLoadConfigBudget: the memory budget and body pacing, by default, at and past their bounds.
func TestLoadConfigBudget(t *testing.T) {
	t.Parallel()
	dev := []string{"YARDSTICK_DEV=true"}
	runLoadCases(t, []loadCase{
		{name: "budget and body pacing defaults", service: "forecast", env: dev, check: func(t *testing.T, c Config) {
			if c.MemoryBudget != 0 || c.MemoryBudgetFraction != 0.5 || c.BodyGrace != 10*time.Second || c.MinBodyRate != 65536 {
				t.Errorf("got budget %d fraction %v grace %s rate %d; want 0 0.5 10s 65536", c.MemoryBudget, c.MemoryBudgetFraction, c.BodyGrace, c.MinBodyRate)
			}
		}},
		{name: "budget and body pacing set, at their bounds", service: "forecast",
			env:  []string{"YARDSTICK_DEV=true", "YARDSTICK_MEMORY_BUDGET=1048576", "YARDSTICK_MIN_BODY_RATE=1"},
			args: []string{"-memory-budget-fraction", "0.9", "-body-grace=1ms"},
			check: func(t *testing.T, c Config) {
				if c.MemoryBudget != 1<<20 || c.MemoryBudgetFraction != 0.9 || c.BodyGrace != time.Millisecond || c.MinBodyRate != 1 {
					t.Errorf("got budget %d fraction %v grace %s rate %d; want 1048576 0.9 1ms 1", c.MemoryBudget, c.MemoryBudgetFraction, c.BodyGrace, c.MinBodyRate)
				}
			}},
		{name: "budget and body pacing past their bounds", service: "forecast",
			env:     []string{"YARDSTICK_DEV=true", "YARDSTICK_MEMORY_BUDGET=1048575", "YARDSTICK_MEMORY_BUDGET_FRACTION=0.91", "YARDSTICK_BODY_GRACE=0s"},
			wantErr: []string{"YARDSTICK_MEMORY_BUDGET 1048575", "YARDSTICK_MEMORY_BUDGET_FRACTION 0.91", "YARDSTICK_BODY_GRACE"}},
		{name: "zero fraction and rate", service: "forecast",
			env:     []string{"YARDSTICK_DEV=true", "YARDSTICK_MEMORY_BUDGET_FRACTION=0", "YARDSTICK_MIN_BODY_RATE=0"},
			wantErr: []string{"YARDSTICK_MEMORY_BUDGET_FRACTION 0", "YARDSTICK_MIN_BODY_RATE"}},
	})
}

// TestLoadConfigClientLimits: the clients' limits' settings, both sides of each bound; unset is
// no limit (today's behaviour), 0 or a negative value is refused, never taken as unset.
func TestLoadConfigClientLimits(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) []string { return append([]string{"YARDSTICK_DEV=true"}, kv...) }
	runLoadCases(t, []loadCase{
		{name: "defaults: no limits, 1 replica, a 2 s admission wait", service: "scoring", env: env(), check: func(t *testing.T, c Config) {
			if c.ClientRate != 0 || c.ClientBurst != 0 || c.ClientConcurrency != 0 || c.Replicas != 1 || c.AdmissionWait != 2*time.Second {
				t.Errorf("got rate %v burst %d concurrency %d replicas %d wait %s; want 0 0 0 1 2s", c.ClientRate, c.ClientBurst,
					c.ClientConcurrency, c.Replicas, c.AdmissionWait)
			}
		}},
		{name: "the smallest limits", service: "scoring",
			env: env("YARDSTICK_CLIENT_RATE=0.001", "YARDSTICK_CLIENT_BURST=1", "YARDSTICK_CLIENT_CONCURRENCY=1", "YARDSTICK_REPLICAS=1", "YARDSTICK_ADMISSION_WAIT=0s"),
			check: func(t *testing.T, c Config) {
				if c.ClientRate != 0.001 || c.ClientBurst != 1 || c.ClientConcurrency != 1 || c.Replicas != 1 || c.AdmissionWait != 0 {
					t.Errorf("got %v %d %d %d %s; want 0.001 1 1 1 0s", c.ClientRate, c.ClientBurst, c.ClientConcurrency, c.Replicas, c.AdmissionWait)
				}
			}},
		{name: "flags", service: "forecast", env: env(),
			args: []string{"-client-rate", "50", "-client-burst", "100", "-client-concurrency", "8", "-replicas", "3", "-admission-wait", "1m"},
			check: func(t *testing.T, c Config) {
				if c.ClientRate != 50 || c.ClientBurst != 100 || c.ClientConcurrency != 8 || c.Replicas != 3 || c.AdmissionWait != time.Minute {
					t.Errorf("got %v %d %d %d %s; want 50 100 8 3 1m", c.ClientRate, c.ClientBurst, c.ClientConcurrency, c.Replicas, c.AdmissionWait)
				}
			}},
		{name: "rate 0", service: "scoring", env: env("YARDSTICK_CLIENT_RATE=0"),
			wantErr: []string{`YARDSTICK_CLIENT_RATE: "0" is not a number more than 0 (leave it empty for no limit)`}},
		{name: "a negative rate, not a number", service: "scoring", env: env("YARDSTICK_CLIENT_RATE=-1", "YARDSTICK_CLIENT_BURST=lots"),
			wantErr: []string{`YARDSTICK_CLIENT_RATE: "-1" is not a number`, `YARDSTICK_CLIENT_BURST: "lots" is not a whole number of at least 1`}},
		{name: "burst and concurrency 0", service: "scoring", env: env("YARDSTICK_CLIENT_BURST=0", "YARDSTICK_CLIENT_CONCURRENCY=0"),
			wantErr: []string{`YARDSTICK_CLIENT_BURST: "0"`, `YARDSTICK_CLIENT_CONCURRENCY: "0"`}},
		{name: "replicas 0, a wait past its bound", service: "scoring", env: env("YARDSTICK_REPLICAS=0", "YARDSTICK_ADMISSION_WAIT=61s"),
			wantErr: []string{"YARDSTICK_REPLICAS 0: want 1 to 1000", "YARDSTICK_ADMISSION_WAIT 1m1s: want 0 (refused at once) to 1m"}},
		{name: "a negative wait", service: "scoring", env: env("YARDSTICK_ADMISSION_WAIT=-1s"),
			wantErr: []string{"YARDSTICK_ADMISSION_WAIT -1s"}},
	})
}

// runLoadCases runs each case in parallel.
func runLoadCases(t *testing.T, cases []loadCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(identityOf(tc.service), tc.args, tc.env, io.Discard)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got no error; want one mentioning %v", tc.wantErr)
				}
				for _, frag := range tc.wantErr {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("error %q; want it to mention %q", err, frag)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v; want none", err)
			}
			tc.check(t, c)
		})
	}
}
