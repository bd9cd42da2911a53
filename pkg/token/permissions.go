package token

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// Services a token can be issued for; the token's aud claim is one of them.
const (
	ServiceScoring  = "scoring"
	ServiceForecast = "forecast"
)

// PermAll grants every permission on every service. Every other permission is declared in the
// contract, on the rpcs it opens (README, Endpoints).
const PermAll = "*"

// Services lists the known services.
func Services() []string { return []string{ServiceScoring, ServiceForecast} }

func knownService(s string) bool { return s == ServiceScoring || s == ServiceForecast }

// owners maps each known permission but PermAll to the service it belongs to.
type owners map[string]string

// contractOwners reads the known permissions from the contract: the method options
// yardstick.auth.v1.permission and also_permission of its rpcs, each belonging to the service
// whose package declares the rpc (proto/yardstick). It is read each time a clients file is, not
// kept: a clients file is read at start and on a change, and an rpc registered after start (a
// test's) is then known too.
func contractOwners() (owners, error) {
	o, err := yardstick.Permissions()
	if err != nil {
		return nil, fmt.Errorf("the contract's permissions: %w", err)
	}
	return o, nil
}

func (o owners) known(perm string) bool {
	_, ok := o[perm]
	return ok || perm == PermAll
}

// list names the known permissions for the clients file's messages: sorted (the registry they
// are read from has no order of its own), PermAll last.
func (o owners) list() string {
	names := slices.Sorted(maps.Keys(o))
	return strings.Join(append(names, PermAll), ", ")
}

// scope keeps the permissions that mean something on service: a token is bound to one service by
// its aud claim, so the other service's permissions would only be noise in it.
func (o owners) scope(perms []string, service string) []string {
	scope := make([]string, 0, len(perms))
	for _, p := range perms {
		if p == PermAll || o[p] == service {
			scope = append(scope, p)
		}
	}
	return scope
}
