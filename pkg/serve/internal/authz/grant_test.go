package authz

import (
	"context"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestGranted: a door's verdict stands for the very method it was reached for, and for no
// other (the chain then authorizes the call itself); taking it names the client in the
// request's facts, which may have been made after the verdict.
func TestGranted(t *testing.T) {
	t.Parallel()
	const scored, other = "/yardstick.scoring.v1.ScoringService/ScoreItemResults", "/grpc.health.v1.Health/Check"
	rt := &routes.Route{Method: scored, Ruled: true, Rule: routes.Rule{Permission: "score"}}
	granted, err := Permit(context.Background(), rt, token.Claims{ClientID: "demo", Scope: []string{"score"}})
	if err != nil {
		t.Fatal(err)
	}
	ri := &reqinfo.Info{}
	ctx := reqinfo.With(granted, ri)
	cases := []struct {
		name   string
		ctx    context.Context
		method string
		want   bool
	}{
		{"the method it was reached for", ctx, scored, true},
		{"another method", ctx, other, false},
		{"no verdict", reqinfo.With(context.Background(), &reqinfo.Info{}), scored, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Granted(tc.ctx, tc.method); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
		})
	}
	if ri.ClientID != "demo" {
		t.Errorf("client noted: got %q; want demo", ri.ClientID)
	}
	if claims, ok := ClaimsFrom(ctx); !ok || claims.ClientID != "demo" {
		t.Errorf("ClaimsFrom: got %+v, %v; want demo's claims", claims, ok)
	}
	public := &routes.Route{Method: other, Ruled: true, Rule: routes.Rule{Public: true}}
	if pctx, err := Permit(context.Background(), public, token.Claims{}); err != nil || Granted(pctx, other) {
		t.Errorf("a public method: got %v, granted %v; want no verdict to take (anyone may call it)", err, Granted(pctx, other))
	}
}
