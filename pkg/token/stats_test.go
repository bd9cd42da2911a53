package token

import (
	"fmt"
	"testing"
	"time"
)

// TestLoginStats: each Authenticate counts in one outcome, and exactly one failure counts as
// a lockout, the one that emptied a bucket (PerClient's burst of 10 from one address).
func TestLoginStats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const addr = "203.0.113.7:1"
	if _, err := f.Authenticate(acme.id, acme.secret, ServiceScoring, addr); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Authenticate(north.id, north.secret, ServiceForecast, addr); err == nil {
		t.Fatal("north on forecast: got a token; want permission denied")
	}
	for i := range 9 {
		f.Authenticate(acme.id, "wrong", ServiceScoring, addr)
		if got := f.LoginStats().Lockouts; got != 0 {
			t.Fatalf("after %d failures: got %d lockouts; want 0 (the bucket holds 10)", i+1, got)
		}
	}
	f.Authenticate(acme.id, "wrong", ServiceScoring, addr) // the 10th empties the bucket
	for range 3 {
		f.Authenticate(acme.id, "wrong", ServiceScoring, addr) // refused unchecked
	}
	want := LoginStats{Success: 1, Forbidden: 1, InvalidClient: 10, Throttled: 3, Lockouts: 1}
	if got := f.LoginStats(); got != want {
		t.Errorf("got %+v; want %+v", got, want)
	}
	f.clock.Advance(time.Hour) // refilled: the next run of failures locks out again
	for range 10 {
		f.Authenticate(acme.id, "wrong", ServiceScoring, addr)
	}
	if got := f.LoginStats().Lockouts; got != 2 {
		t.Errorf("after a refill and 10 more failures: got %d lockouts; want 2", got)
	}
}

// TestLockoutsAcrossReplicas: three replicas sharing Redis count one lockout between them for
// a bucket emptied by failures spread over all three; without Redis each counts its own.
func TestLockoutsAcrossReplicas(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	for _, tc := range []struct {
		name string
		url  string
		want uint64
	}{{"shared through Redis", srv.url(), 1}, {"in memory", "", 0}} {
		pods := replicas(t, 3, tc.url, nil)
		for i := range 12 { // 4 failures a replica: only the shared bucket of 10 empties
			pods[i%3].Authenticate(acme.id, fmt.Sprintf("wrong-%d", i), ServiceScoring, "203.0.113.8:1")
		}
		var got uint64
		for _, p := range pods {
			got += p.LoginStats().Lockouts
		}
		if got != tc.want {
			t.Errorf("%s: got %d lockouts over three replicas; want %d", tc.name, got, tc.want)
		}
	}
}

// TestKeys: the signing key comes first, the time in a kid of GenerateKey's form is read, and
// RotateBy is that time plus the lifetime; other kids and a zero lifetime give no date.
func TestKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		wantBy   time.Time
	}{
		{"90 days", 90 * 24 * time.Hour, time.Date(2027, 2, 20, 10, 15, 0, 0, time.UTC)},
		{"no lifetime", 0, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(o *Options) { o.KeyLifetime = tc.lifetime })
			writeKey(t, f.keysDir, "20261122T101500Z-3f9a1c2b")
			if _, err := f.Reload(); err != nil {
				t.Fatal(err)
			}
			got := f.Keys()
			want := []KeyInfo{
				{Kid: "k1", Signing: true}, // "k1" > "2026…": the greatest kid signs
				{Kid: "20261122T101500Z-3f9a1c2b", Created: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC), RotateBy: tc.wantBy},
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %+v; want %+v", got, want)
			}
		})
	}
	if _, err := New(Options{Dev: true, KeyLifetime: -time.Second}); err == nil {
		t.Error("KeyLifetime -1s: got no error; want one")
	}
}

func TestKidTime(t *testing.T) {
	t.Parallel()
	for kid, want := range map[string]time.Time{
		"20261122T101500Z-3f9a1c2b":     time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC),
		"dev-20261122T101500Z-3f9a1c2b": time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC),
		"20261122T101500Z":              time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC),
		"20261122T10150Z":               {},
		"k1":                            {},
		"2026-11-22":                    {},
	} {
		if got := kidTime(kid); !got.Equal(want) {
			t.Errorf("kidTime(%q) = %v; want %v", kid, got, want)
		}
	}
}

// TestVersion: the version is the same for the same files, and changes with a changed clients
// file or key, and only then.
func TestVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	v0 := f.Version()
	if len(v0) != 12 {
		t.Fatalf("got version %q; want 12 hex digits", v0)
	}
	if g := newFixture(t); g.Version() == v0 {
		t.Errorf("another fixture's fresh key and hashes: got the same version %q; want another", v0)
	}
	if _, err := f.Reload(); err != nil || f.Version() != v0 {
		t.Errorf("unchanged reload: got %q (%v); want %q", f.Version(), err, v0)
	}
	writeClients(t, f.dir, acme)
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	v1 := f.Version()
	if v1 == v0 {
		t.Errorf("clients changed: version still %q", v1)
	}
	writeKey(t, f.keysDir, "k2")
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if v2 := f.Version(); v2 == v1 || v2 == v0 {
		t.Errorf("key added: got version %q; want one unlike %q and %q", v2, v0, v1)
	}
}
