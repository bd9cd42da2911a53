package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestReloadCause sorts the errors the real reloads return: a content dir and a clients file
// that are missing, a named pipe, too large, and broken.
func TestReloadCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 17<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("clients: [nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	contentBroken := t.TempDir()
	if err := os.WriteFile(filepath.Join(contentBroken, "items.csv"), []byte("id,framework\nx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clients := func(path string) error {
		_, err := token.New(token.Options{ClientsFile: path, Dev: true})
		return err
	}
	content := func(dir string) error {
		_, err := measure.OpenLive(dir)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"clients file missing", clients(filepath.Join(dir, "none.yaml")), "missing"},
		{"clients file a named pipe", clients(fifo), "special_file"},
		{"clients file over its limit", clients(big), "too_large"},
		{"clients file broken", clients(broken), "invalid"},
		{"content dir missing", content(filepath.Join(dir, "none")), "missing"},
		{"content dir a named pipe", content(fifo), "special_file"},
		{"content dir broken", content(contentBroken), "invalid"},
	} {
		if tc.err == nil {
			t.Errorf("%s: got no error; want one", tc.name)
			continue
		}
		if got := ReloadCause(tc.err); got != tc.want {
			t.Errorf("%s: got cause %q for %q; want %q", tc.name, got, tc.err, tc.want)
		}
	}
}

// TestReloads: one info series per source, replaced when the version changes; the last success
// time; failures by cause, present at 0 before the first.
func TestReloads(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	r := NewReloads(reg, prometheus.Labels{"service": "scoring"})
	at := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	r.Succeeded(SourceContent, "aaaaaaaaaaaa", at)
	r.Succeeded(SourceContent, "bbbbbbbbbbbb", at.Add(time.Second))
	r.Succeeded(SourceClients, "cccccccccccc", at)
	r.Failed(SourceClients, os.ErrNotExist)
	want := `
# HELP yardstick_reload_info The version (a hash of the files) loaded from each source: content or clients (always 1).
# TYPE yardstick_reload_info gauge
yardstick_reload_info{hash="bbbbbbbbbbbb",service="scoring",source="content"} 1
yardstick_reload_info{hash="cccccccccccc",service="scoring",source="clients"} 1
# HELP yardstick_reload_last_success_timestamp_seconds When each source was last read without a problem (loaded, or found unchanged).
# TYPE yardstick_reload_last_success_timestamp_seconds gauge
yardstick_reload_last_success_timestamp_seconds{service="scoring",source="clients"} 1.7957412e+09
yardstick_reload_last_success_timestamp_seconds{service="scoring",source="content"} 1.795741201e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "yardstick_reload_info", "yardstick_reload_last_success_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(r.failures.WithLabelValues(SourceClients, "missing")); got != 1 {
		t.Errorf("clients missing failures: got %v; want 1", got)
	}
	if n := testutil.CollectAndCount(r.failures); n != 10 {
		t.Errorf("failure series: got %d; want 10 (2 sources × 5 causes, from the start)", n)
	}
}

type fakeIssuer struct {
	stats token.LoginStats
	keys  []token.KeyInfo
}

func (f fakeIssuer) LoginStats() token.LoginStats { return f.stats }
func (f fakeIssuer) Keys() []token.KeyInfo        { return f.keys }

// TestIssuerCollector: the issuer's counts and keys as series, read at each scrape.
func TestIssuerCollector(t *testing.T) {
	t.Parallel()
	by := time.Date(2027, 2, 20, 10, 15, 0, 0, time.UTC)
	src := fakeIssuer{
		stats: token.LoginStats{Success: 5, InvalidClient: 4, Forbidden: 3, Throttled: 2, Busy: 1, Lockouts: 7},
		keys:  []token.KeyInfo{{Kid: "20261122T101500Z-3f9a1c2b", Signing: true, RotateBy: by}, {Kid: "old"}},
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewIssuerCollector(src, prometheus.Labels{"service": "forecast"}))
	want := `
# HELP yardstick_login_lockouts_total Failed logins that locked their caller out (emptied a throttle bucket); with Redis, counted by one replica.
# TYPE yardstick_login_lockouts_total counter
yardstick_login_lockouts_total{service="forecast"} 7
# HELP yardstick_logins_total Logins at /authToken and over gRPC by outcome: success, invalid_client, forbidden, throttled, busy.
# TYPE yardstick_logins_total counter
yardstick_logins_total{outcome="busy",service="forecast"} 1
yardstick_logins_total{outcome="forbidden",service="forecast"} 3
yardstick_logins_total{outcome="invalid_client",service="forecast"} 4
yardstick_logins_total{outcome="success",service="forecast"} 5
yardstick_logins_total{outcome="throttled",service="forecast"} 2
# HELP yardstick_signing_key_expiry_timestamp_seconds When each key of the set should be replaced: the time in its kid plus YARDSTICK_KEY_LIFETIME.
# TYPE yardstick_signing_key_expiry_timestamp_seconds gauge
yardstick_signing_key_expiry_timestamp_seconds{kid="20261122T101500Z-3f9a1c2b",service="forecast"} 1.8031185e+09
# HELP yardstick_signing_key_info The key that signs new tokens (always 1).
# TYPE yardstick_signing_key_info gauge
yardstick_signing_key_info{kid="20261122T101500Z-3f9a1c2b",service="forecast"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
