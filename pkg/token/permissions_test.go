package token

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestContractOwners: the known permissions are the contract's, each belonging to a service a
// token can be issued for (a permission declared in another package could never be granted).
func TestContractOwners(t *testing.T) {
	t.Parallel()
	o, err := contractOwners()
	if err != nil {
		t.Fatal(err)
	}
	for perm, service := range o {
		if !knownService(service) {
			t.Errorf("permission %q belongs to %q; want one of %v", perm, service, Services())
		}
	}
	for _, perm := range []string{"score:standard", "content:read", "forecast:group", PermAll} {
		if !o.known(perm) {
			t.Errorf("%q: got unknown; want known", perm)
		}
	}
	if o.known("score:*") || o.known("") {
		t.Error(`"score:*" or "": got known; want unknown (no wildcards but "*")`)
	}
}

func TestOwnersScope(t *testing.T) {
	t.Parallel()
	o := owners{"score:standard": ServiceScoring, "content:read": ServiceScoring, "forecast:reading": ServiceForecast}
	perms := []string{"score:standard", "forecast:reading", PermAll, "content:read", "unknown:one"}
	for _, tc := range []struct {
		name    string
		o       owners
		service string
		want    []string
	}{
		{"scoring", o, ServiceScoring, []string{"score:standard", PermAll, "content:read"}},
		{"forecast", o, ServiceForecast, []string{"forecast:reading", PermAll}},
		{"no owners keep PermAll alone", nil, ServiceScoring, []string{PermAll}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.o.scope(perms, tc.service); !slices.Equal(got, tc.want) {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
	if got, want := o.list(), "content:read, forecast:reading, score:standard, *"; got != want {
		t.Errorf("list: got %q; want %q", got, want)
	}
}

// TestDocsPermissions holds docs/api.md's table of permissions (its docs entry, beside the
// paths') to the contract: every permission declared there, with its service, and no other.
func TestDocsPermissions(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	got := owners{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+:[a-z]+)` \\| ([a-z]+) \\|").FindAllSubmatch(readme, -1) {
		got[string(m[1])] = string(m[2])
	}
	want, err := contractOwners()
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("docs/api.md's table: got %v; want the contract's %v", got, want)
	}
}
