package authz

import (
	"context"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestPermit: claims with the route's permission put them in the call's context for its
// handler; claims without it, a route with no rule and no route at all are refused; a public
// route is open to all and carries no claims.
func TestPermit(t *testing.T) {
	t.Parallel()
	const scored, health = "/yardstick.scoring.v1.ScoringService/ScoreItemResults", "/grpc.health.v1.Health/Check"
	ruled := &routes.Route{Method: scored, Ruled: true, Rule: routes.Rule{Permission: "score"}}
	public := &routes.Route{Method: health, Ruled: true, Rule: routes.Rule{Public: true}}
	demo := token.Claims{ClientID: "demo", Scope: []string{"score"}}
	for _, tc := range []struct {
		name       string
		route      *routes.Route
		claims     token.Claims
		wantErr    bool
		wantClient string
	}{
		{"the permission held", ruled, demo, false, "demo"},
		{"the permission lacking", ruled, token.Claims{ClientID: "other", Scope: []string{"forecast"}}, true, ""},
		{"a route without a rule", &routes.Route{Method: scored}, demo, true, ""},
		{"no route", nil, demo, true, ""},
		{"a public route", public, token.Claims{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, err := permit(context.Background(), tc.route, tc.claims)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got %v; want an error %v", err, tc.wantErr)
			}
			if got := ClientID(ctx); got != tc.wantClient {
				t.Errorf("client in the context: got %q; want %q", got, tc.wantClient)
			}
		})
	}
}
