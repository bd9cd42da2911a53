package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestFlagsAsGoUsersExpect: -help is not an error, booleans go bare, placeholders name the type.
func TestFlagsAsGoUsersExpect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		env   []string
		check func(t *testing.T, c Config, err error)
	}{
		{name: "bare -dev is true", args: []string{"-dev"}, check: func(t *testing.T, c Config, err error) {
			if err != nil || !c.Dev {
				t.Errorf("got Dev=%v err=%v; want true, nil", c.Dev, err)
			}
		}},
		{name: "-dev=false wins over the environment", args: []string{"-dev=false"}, env: []string{"YARDSTICK_DEV=true"},
			check: func(t *testing.T, c Config, err error) {
				if err == nil || !strings.Contains(err.Error(), "YARDSTICK_CLIENTS_FILE is required") {
					t.Errorf("got err %v; want production checks (dev off)", err)
				}
			}},
		{name: "-dev=true", args: []string{"-dev=true"}, check: func(t *testing.T, c Config, err error) {
			if err != nil || !c.Dev {
				t.Errorf("got Dev=%v err=%v; want true, nil", c.Dev, err)
			}
		}},
		{name: "bare -dev then a value flag", args: []string{"-dev", "-token-ttl", "2h"}, check: func(t *testing.T, c Config, err error) {
			if err != nil || !c.Dev || c.TokenTTL != 2*time.Hour {
				t.Errorf("got Dev=%v TTL=%s err=%v; want true 2h nil", c.Dev, c.TokenTTL, err)
			}
		}},
		{name: "-dev=maybe", args: []string{"-dev=maybe"}, check: func(t *testing.T, c Config, err error) {
			if err == nil || !strings.Contains(err.Error(), `"maybe" is not true or false`) {
				t.Errorf("got err %v; want a bad-boolean error", err)
			}
		}},
		{name: "value flag without its value", args: []string{"-token-ttl"}, env: []string{"YARDSTICK_DEV=true"},
			check: func(t *testing.T, c Config, err error) {
				if err == nil || !strings.Contains(err.Error(), "flag needs an argument: -token-ttl") {
					t.Errorf("got err %v; want 'flag needs an argument'", err)
				}
			}},
		{name: "-help", args: []string{"-help"}, check: func(t *testing.T, c Config, err error) {
			if !errors.Is(err, ErrHelp) {
				t.Errorf("got err %v; want ErrHelp", err)
			}
		}},
		{name: "-h", args: []string{"-h"}, check: func(t *testing.T, c Config, err error) {
			if !errors.Is(err, ErrHelp) {
				t.Errorf("got err %v; want ErrHelp", err)
			}
		}},
		{name: "-version", args: []string{"-version"}, check: func(t *testing.T, c Config, err error) {
			if !errors.Is(err, ErrVersion) {
				t.Errorf("got err %v; want ErrVersion", err)
			}
		}},
		{name: "-version needs no valid settings", args: []string{"-version"}, env: []string{"YARDSTICK_NO_SUCH=1", "YARDSTICK_TOKEN_TTL=soon"},
			check: func(t *testing.T, c Config, err error) {
				if !errors.Is(err, ErrVersion) {
					t.Errorf("got err %v; want ErrVersion", err)
				}
			}},
		{name: "-version=false runs", args: []string{"-version=false", "-dev"}, check: func(t *testing.T, c Config, err error) {
			if err != nil || !c.Dev {
				t.Errorf("got Dev=%v err=%v; want true, nil", c.Dev, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(scoringID, tc.args, tc.env, io.Discard)
			tc.check(t, c, err)
		})
	}
}

func TestHelpText(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := LoadConfig(scoringID, []string{"-help"}, nil, &out); !errors.Is(err, ErrHelp) {
		t.Fatalf("got err %v; want ErrHelp", err)
	}
	help := out.String()
	for _, tc := range []struct{ want string }{
		{"Usage of scoring:\n"},
		{"  -http-addr string\n    \tlisten address of the JSON front, health and metrics (env YARDSTICK_HTTP_ADDR, default \":8080\")\n"},
		{"  -token-ttl duration\n"},
		{"  -max-items int\n"},
		{"  -max-body-bytes int\n"},
		{"  -trusted-proxies string\n"},
		{"  -dev\n    \tdev mode"},
		{"  -version\n    \tprint the build version and exit\n"},
	} {
		t.Run(strings.Fields(tc.want)[0], func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(help, tc.want) {
				t.Errorf("help lacks %q; got:\n%s", tc.want, help)
			}
		})
	}
	for _, bad := range []string{" value\n", "help requested", "-dev string", "-dev value"} {
		if strings.Contains(help, bad) {
			t.Errorf("help contains %q; got:\n%s", bad, help)
		}
	}
	// Every setting is listed once, the service's own too, and -version.
	var own Settings
	scoringID.Settings(&own)
	if got, want := strings.Count(help, "\n  -"), len(settings(scoringID, &Config{}))+len(own.list)+1; got != want {
		t.Errorf("got %d flags in help; want %d", got, want)
	}
}

// TestMainHelp: -help through Main returns nil (the process exits 0) without building a service,
// and stderr holds the usage, not "flag: help requested".
func TestMainHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-help", "-h", "--help"} {
		t.Run(arg, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			built := false
			err := Main(context.Background(), forecastID, []string{arg}, nil, io.Discard, &stderr, func(Config, *slog.Logger) (Service, error) {
				built = true
				return Service{}, errors.New("must not be called")
			})
			if err != nil || built {
				t.Errorf("got err %v, built %v; want nil, false", err, built)
			}
			if got := stderr.String(); !strings.HasPrefix(got, "Usage of forecast:") || strings.Contains(got, "help requested") {
				t.Errorf("got stderr %q; want the usage only", got)
			}
		})
	}
}

// TestMainVersion: -version through Main writes "<service> <Version>" to stdout and returns nil
// (the process exits 0) without building a service, whatever else is given.
func TestMainVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"-version", []string{"-version"}},
		{"--version", []string{"--version"}},
		{"-version after other flags", []string{"-dev", "-token-ttl", "2h", "-version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			built := false
			err := Main(context.Background(), scoringID, tc.args, nil, &stdout, &stderr, func(Config, *slog.Logger) (Service, error) {
				built = true
				return Service{}, errors.New("must not be called")
			})
			if err != nil || built {
				t.Errorf("got err %v, built %v; want nil, false", err, built)
			}
			if got, want := stdout.String(), "scoring "+Version+"\n"; got != want {
				t.Errorf("got stdout %q; want %q", got, want)
			}
			if got := stderr.String(); got != "" {
				t.Errorf("got stderr %q; want nothing", got)
			}
		})
	}
}
