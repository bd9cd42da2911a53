package serve

import (
	"testing"
	"time"
)

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
