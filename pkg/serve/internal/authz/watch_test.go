package authz

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/pkg/token/tokentest"
)

// watchFixture is an authorizer over a clients file of one client, "streamer", whose entry the
// test rewrites, with a token of ttl.
type watchFixture struct {
	a        *Authorizer
	issuer   *token.Issuer
	dir      string
	streamer tokentest.Client
	bearer   string
}

func newWatchFixture(t *testing.T, ttl time.Duration) *watchFixture {
	t.Helper()
	f := &watchFixture{dir: t.TempDir(), streamer: tokentest.Generated(t, "streamer", []string{token.ServiceScoring})}
	clients := f.write(t, "score:batch", "score:standard")
	// A leeway of a millisecond: the expiry the test waits for is the token's own.
	var err error
	f.issuer, err = token.New(token.Options{ClientsFile: clients, KeysDir: tokentest.KeysDir(t), TTL: ttl, Leeway: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.a, f.bearer = New(f.issuer, token.ServiceScoring, slog.New(slog.DiscardHandler), nil), tokentest.Mint(t, f.issuer, f.streamer, token.ServiceScoring)
	return f
}

// write writes the clients file with streamer's permissions, or without streamer (another
// client with its secret in its place) when there are none.
func (f *watchFixture) write(t *testing.T, perms ...string) (path string) {
	t.Helper()
	c := f.streamer
	c.Permissions = perms
	if len(perms) == 0 {
		c.ID, c.Permissions = "someone-else", []string{"score:standard"}
	}
	return tokentest.WriteClients(t, f.dir, c)
}

var batchRoute = &routes.Route{Method: "/yardstick.scoring.v1.ScoringService/ScoreBatch", Ruled: true, Rule: routes.Rule{Permission: "score:batch"}}

// TestWatch: a stream's rights are checked again at each reload and at its token's expiry, and
// the stream is ended with the answer a call would get then: 401 for a client removed or a token
// expired, 403 for the stream's permission taken away; a reload that keeps its rights, or one
// that narrows only another permission, does not end it.
func TestWatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ttl    time.Duration
		change func(t *testing.T, f *watchFixture)
		code   codes.Code
		reason string // of a 401, in its additionalInfo
	}{
		{"client removed", time.Hour, func(t *testing.T, f *watchFixture) { f.write(t) }, codes.Unauthenticated, "The token was revoked"},
		{"stream's permission taken", time.Hour, func(t *testing.T, f *watchFixture) { f.write(t, "score:standard") }, codes.PermissionDenied, ""},
		{"token expired", 1500 * time.Millisecond, nil, codes.Unauthenticated, "The token has expired"},
		{"another permission taken", time.Hour, func(t *testing.T, f *watchFixture) { f.write(t, "score:batch") }, codes.OK, ""},
		{"nothing changed", time.Hour, func(t *testing.T, f *watchFixture) {}, codes.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWatchFixture(t, tc.ttl)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan error, 1)
			f.a.Watch(ctx, batchRoute, f.bearer, func(err error) { ended <- err })
			if tc.change != nil {
				time.Sleep(20 * time.Millisecond) // the watch is waiting
				tc.change(t, f)
				if _, err := f.issuer.Reload(); err != nil {
					t.Fatal(err)
				}
			}
			wait := 3 * time.Second
			if tc.code == codes.OK {
				wait = 300 * time.Millisecond
			}
			select {
			case err := <-ended:
				got, ok := RevokedErr(err)
				if !ok || tc.code == codes.OK || status.Code(got) != tc.code {
					t.Fatalf("ended with %v; want %v", err, tc.code)
				}
				if h := rpcerr.ToHTTP(got); tc.reason != "" && !strings.Contains(h.Body.AdditionalInfo, tc.reason) {
					t.Errorf("got %v; want reason %s", got, tc.reason)
				}
			case <-time.After(wait):
				if tc.code != codes.OK {
					t.Fatalf("not ended within %s; want %v", wait, tc.code)
				}
			}
		})
	}
}

// TestWatchStopsWithItsCall: once the call's context ends the watch neither ends it nor
// lingers, whatever the reloads after.
func TestWatchStopsWithItsCall(t *testing.T) {
	t.Parallel()
	f := newWatchFixture(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	f.a.Watch(ctx, batchRoute, f.bearer, func(err error) { ended <- err })
	cancel()
	time.Sleep(20 * time.Millisecond)
	f.write(t)
	if _, err := f.issuer.Reload(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		t.Fatalf("ended after its call: %v; want nothing", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, ok := RevokedErr(errors.New("other")); ok {
		t.Error("RevokedErr of another error: got ok; want not")
	}
}
