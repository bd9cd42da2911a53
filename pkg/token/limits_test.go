package token

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestParseLimits: each key is optional, rate a number > 0 (whole or not), burst and
// concurrency whole numbers >= 1; the smallest good values of each pass, the values just past
// them fail (testdata/clients/limits.yaml, TestReadClientsFileBad).
func TestParseLimits(t *testing.T) {
	t.Parallel()
	head := "clients:\n  - clientId: c\n    secretHash: $sha256$ByZ5KQX0EHjmHy6Sx01Nsw$cPKeyA0IVGfwyj7AUkzGnSONR45LMX8/6TbIk/ay43M\n" +
		"    services: [scoring]\n    permissions: [\"*\"]\n"
	for _, tc := range []struct {
		name, limits string
		want         Limits
		err          string
	}{
		{"none", "", Limits{}, ""},
		{"empty mapping", "    limits: {}\n", Limits{}, ""},
		{"all three", "    limits: {rate: 50, burst: 100, concurrency: 8}\n", Limits{50, 100, 8}, ""},
		{"a fractional rate", "    limits: {rate: 0.5}\n", Limits{Rate: 0.5}, ""},
		{"the smallest rate", "    limits: {rate: 1e-9}\n", Limits{Rate: 1e-9}, ""},
		{"rate 0", "    limits: {rate: 0}\n", Limits{}, `c.yaml:6: client "c": limits.rate must be more than 0 and finite, got 0`},
		{"burst and concurrency 1", "    limits: {burst: 1, concurrency: 1}\n", Limits{Burst: 1, Concurrency: 1}, ""},
		{"burst 0", "    limits: {burst: 0}\n", Limits{}, `c.yaml:6: client "c": limits.burst must be at least 1, got 0`},
		{"concurrency 0", "    limits: {concurrency: 0}\n", Limits{}, `c.yaml:6: client "c": limits.concurrency must be at least 1, got 0`},
		{"a repeated key", "    limits:\n      rate: 1\n      rate: 2\n", Limits{}, `c.yaml:8: client "c": limits: key rate is repeated (first at line 7)`},
		{"limits null", "    limits:\n", Limits{}, `c.yaml:6: client "c": limits must be a mapping with the keys rate, burst, concurrency`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clients, err := parseClients("c.yaml", []byte(head+tc.limits))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("got %v; want %s", err, tc.err)
				}
				return
			}
			if err != nil || len(clients) != 1 {
				t.Fatalf("got %d clients, %v; want 1 and no error", len(clients), err)
			}
			if got := clients[0].limits; got != tc.want {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestLimitsReloaded: Limits reads the clients file in force; a reload with a bad limit is
// refused with file:line and the last good limits stay.
func TestLimitsReloaded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if got, ok := f.Limits("north"); !ok || got != (Limits{}) {
		t.Fatalf("north before any limits: got %+v %v; want none set, registered", got, ok)
	}
	if _, ok := f.Limits("nobody"); ok {
		t.Errorf("an unknown client: got registered; want not")
	}
	data, err := os.ReadFile(f.clients)
	if err != nil {
		t.Fatal(err)
	}
	withLimits := strings.Replace(string(data), "  - clientId: north\n", "  - clientId: north\n    limits: {rate: 5, concurrency: 2}\n", 1)
	if withLimits == string(data) {
		t.Fatalf("the fixture's clients file has no north entry:\n%s", data)
	}
	if err := os.WriteFile(f.clients, []byte(withLimits), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Limits("north"); got != (Limits{Rate: 5, Concurrency: 2}) {
		t.Errorf("after the reload: got %+v; want rate 5, concurrency 2", got)
	}
	bad := strings.Replace(withLimits, "rate: 5", "rate: -5", 1)
	if err := os.WriteFile(f.clients, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	line := 1 + slices.Index(strings.Split(bad, "\n"), "    limits: {rate: -5, concurrency: 2}")
	_, err = f.Reload()
	want := f.clients + ":" + strconv.Itoa(line) + `: client "north": limits.rate must be more than 0 and finite, got -5`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v; want an error containing %s", err, want)
	}
	if got, _ := f.Limits("north"); got != (Limits{Rate: 5, Concurrency: 2}) {
		t.Errorf("after a refused reload: got %+v; want the last good rate 5, concurrency 2", got)
	}
	ids := f.ClientIDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"acme-reader", "north"}) {
		t.Errorf("ClientIDs: got %v; want [acme-reader north]", ids)
	}
}
