package gate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/internal/redistest"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

const budgetBytes = 64 << 20

var (
	scored = &routes.Route{Method: "/yardstick.scoring.v1.ScoringService/ScoreItemResults", Ruled: true, Rule: routes.Rule{Permission: "score:standard"}}
	group  = &routes.Route{Method: "/yardstick.forecast.v1.ForecastService/ForecastGroup", Ruled: true, Rule: routes.Rule{Permission: "score:standard"}, Group: &admission.Group{
		Entries: 10, Cost: admission.GroupCost{JSON: admission.FrontCost{PerByte: 1, PerEntry: 100, MinEntryBytes: 1}, Proto: admission.FrontCost{PerByte: 3, PerEntry: 7, MinEntryBytes: 1}, Base: 1000},
	}} // a model of its own: the calls are costed by their route's
	health = &routes.Route{Method: "/grpc.health.v1.Health/Check", Ruled: true, Rule: routes.Rule{Public: true}}
)

// fixture is a gate over a clients file of one client, "acme" (permission score:standard), with
// the limits cfg gives every client, and acme's token.
func fixture(t *testing.T, cfg quota.Config) (*Gate, string) {
	t.Helper()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	kid, pem, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, kid+".pem"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(dir, "clients.yaml")
	yaml := "clients:\n  - clientId: acme\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"score:standard\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	issuer, err := token.New(token.Options{ClientsFile: clients, KeysDir: keys, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := issuer.Authenticate("acme", secret, token.ServiceScoring, "10.1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Service = "scoring"
	limits, err := quota.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	b := admission.New(budgetBytes, reg, "scoring")
	registries.Store(b, reg)
	return &Gate{Authz: authz.New(issuer, token.ServiceScoring, slog.New(slog.DiscardHandler), nil), Limits: limits, Budget: b}, tok.AccessToken
}

// registries are the fixtures' budgets' registries (*admission.Budget to *prometheus.Registry).
var registries sync.Map

// admitted is what b has admitted, as its series yardstick_memory_budget_in_use_bytes says.
func admitted(t *testing.T, b *admission.Budget) int64 {
	t.Helper()
	reg, _ := registries.Load(b)
	families, err := reg.(*prometheus.Registry).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "yardstick_memory_budget_in_use_bytes" {
			return int64(f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	t.Fatal("no series yardstick_memory_budget_in_use_bytes")
	return 0
}

// TestAdmitInOrder: authentication, authorization, the transport's check, then the client's
// limits, each refusal before anything later is asked or spent: a refused token never reaches
// the check, a refused check spends none of the client's rate (a burst of 1: the call after it
// is admitted), and the limits refuse the call over them with the RateLimit headers on its
// ticket.
func TestAdmitInOrder(t *testing.T) {
	t.Parallel()
	refused := errors.New("415")
	for _, tc := range []struct {
		name      string
		route     *routes.Route
		bearer    func(tok string) string
		check     error
		wantCode  codes.Code
		wantErr   error
		checked   bool
		wantSpent bool // the call spent the client's one request: the next is refused for the rate
	}{
		{"no token", scored, func(string) string { return "" }, nil, codes.Unauthenticated, nil, false, false},
		{"a token not of this deployment", scored, func(string) string { return "x.y.z" }, nil, codes.Unauthenticated, nil, false, false},
		{"no route", nil, func(tok string) string { return tok }, nil, codes.PermissionDenied, nil, false, false},
		{"the check refuses", scored, func(tok string) string { return tok }, refused, codes.Unknown, refused, true, false},
		{"admitted", scored, func(tok string) string { return tok }, nil, codes.OK, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, tok := fixture(t, quota.Config{Rate: 1, Burst: 1})
			checked := false
			check := func() error { checked = true; return tc.check }
			ctx, ticket, err := g.Admit(context.Background(), Call{Route: tc.route, Bearer: tc.bearer(tok), Front: "http"}, check)
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) || tc.wantErr == nil && status.Code(err) != tc.wantCode {
				t.Fatalf("got %v; want %v %v", err, tc.wantCode, tc.wantErr)
			}
			if checked != tc.checked {
				t.Errorf("check run: got %v; want %v", checked, tc.checked)
			}
			if err == nil && (ticket.Method != scored.Method || ticket.Client != "acme" || authz.ClientID(ctx) != "acme") {
				t.Errorf("ticket: got method %q client %q (context %q); want %q acme", ticket.Method, ticket.Client, authz.ClientID(ctx), scored.Method)
			}
			if ticket.Policy != "" && err == nil && ticket.Policy != `"rate";q=1;w=1` {
				t.Errorf("RateLimit-Policy: got %q; want \"rate\";q=1;w=1", ticket.Policy)
			}
			ticket.Release()
			_, next, err := g.Admit(context.Background(), Call{Route: scored, Bearer: tok, Front: "http"}, nil)
			if spent := status.Code(err) == codes.ResourceExhausted; spent != tc.wantSpent {
				t.Errorf("the next call refused for the rate: got %v (%v); want %v", spent, err, tc.wantSpent)
			}
			if tc.wantSpent && (next.Policy != `"rate";q=1;w=1` || next.State != `"rate";r=0;t=1`) {
				t.Errorf("refused call's headers: got %q %q; want \"rate\";q=1;w=1 \"rate\";r=0;t=1", next.Policy, next.State)
			}
		})
	}
}

// TestTicketHoldsItsPlace: a ticket holds a place of its client's concurrency (1) until it is
// released, once; a call of a public method has no client and no limits.
func TestTicketHoldsItsPlace(t *testing.T) {
	t.Parallel()
	g, tok := fixture(t, quota.Config{Concurrency: 1})
	call := Call{Route: scored, Bearer: tok, Front: "grpc"}
	_, first, err := g.Admit(context.Background(), call, nil)
	if err != nil || !first.Holds() {
		t.Fatalf("first call: got %v, holds %v; want admitted, holding a place", err, first.Holds())
	}
	if _, second, err := g.Admit(context.Background(), call, nil); status.Code(err) != codes.ResourceExhausted || second.Holds() || second.Client != "acme" {
		t.Errorf("second call while the first runs: got %v, holds %v, client %q; want ResourceExhausted, holding nothing, acme", err, second.Holds(), second.Client)
	}
	first.Release()
	first.Release() // once: a second release gives nothing back twice
	_, third, err := g.Admit(context.Background(), call, nil)
	if err != nil {
		t.Fatalf("after the release: got %v; want admitted", err)
	}
	third.Release()
	for range 3 {
		_, pub, err := g.Admit(context.Background(), Call{Route: health, Front: "grpc"}, nil)
		if err != nil || pub.Client != "" || pub.Holds() || pub.Method != health.Method {
			t.Fatalf("public call: got %v, client %q, holds %v, method %q; want admitted, no client, nothing held", err, pub.Client, pub.Holds(), pub.Method)
		}
	}
}

// TestTicketBudget: the budget a unary call's ticket admits once its size is known is its cost,
// held until the ticket is released; a stream holds its reserve, and a record of it its cost.
func TestTicketBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		admit func(t *testing.T, g *Gate, tok string) *Ticket
		want  func(b *admission.Budget) int64
	}{
		{"a gRPC group message", func(t *testing.T, g *Gate, tok string) *Ticket {
			_, tk, err := g.Admit(context.Background(), Call{Route: group, Bearer: tok, Front: "grpc"}, nil)
			if err == nil {
				err = tk.AdmitDecode(context.Background(), 1000)
			}
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}, func(*admission.Budget) int64 { return 1000 + 3*1000 }}, // base, and per byte over 7 per entry (10 at most)
		{"a JSON group body", func(t *testing.T, g *Gate, tok string) *Ticket {
			_, tk, err := g.Admit(context.Background(), Call{Route: group, Bearer: tok, Front: "http"}, nil)
			if err == nil {
				err = tk.AdmitBody(context.Background(), []byte(`{"entries":[{},{}]}`))
			}
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}, func(*admission.Budget) int64 { return 1000 + 100*4 }}, // base, and 4 entries by its brackets over 1 per byte
		{"a stream", func(t *testing.T, g *Gate, tok string) *Ticket {
			_, tk, err := g.Admit(context.Background(), Call{Route: scored, Bearer: tok, Front: "http", Stream: true}, nil)
			if err != nil || tk.Stream() == nil {
				t.Fatalf("got %v, stream %v; want the stream admitted", err, tk.Stream())
			}
			return tk
		}, func(*admission.Budget) int64 { return admission.StreamReserve }},
		{"a record of a stream", func(t *testing.T, g *Gate, tok string) *Ticket {
			ctx, st, err := g.Admit(context.Background(), Call{Route: scored, Bearer: tok, Front: "grpc", Stream: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Release)
			_, rec, err := g.Admit(ctx, Call{Route: scored, Bearer: tok, Front: "grpc", Record: st.Stream(), Cost: 5 << 20}, nil)
			if err != nil || !rec.Holds() {
				t.Fatalf("got %v, holds %v; want the record admitted, holding its cost", err, rec.Holds())
			}
			return rec
		}, func(*admission.Budget) int64 { return admission.StreamReserve + 5<<20 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, tok := fixture(t, quota.Config{})
			tk := tc.admit(t, g, tok)
			want := tc.want(g.Budget)
			if got := admitted(t, g.Budget); got != want {
				t.Errorf("admitted while the call runs: got %d; want %d", got, want)
			}
			before := admitted(t, g.Budget)
			tk.Release()
			if got := admitted(t, g.Budget); got >= before || before == 0 {
				t.Errorf("admitted after the release: got %d (before %d); want less", got, before)
			}
		})
	}
}

// TestLocalLeavesTheSharedRate: with the rate shared through a real redis-server, a Local call
// (gRPC's tap handle) is admitted without the rate, holding its place of the client's
// concurrency; AdmitRate then decides the rate, once, with its headers (rate 1, burst 1: the
// second call is refused, still holding its place until released), and AdmitDecode decides a rate
// still due before the budget. Without Local, or without Redis, Admit decides the rate itself.
func TestLocalLeavesTheSharedRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		redis   bool
		local   bool
		wantDue bool
	}{
		{"local, shared through Redis", true, true, true},
		{"not local, shared through Redis", true, false, false},
		{"local, in memory", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := quota.Config{Rate: 1, Burst: 1, Concurrency: 5}
			if tc.redis {
				cfg.RedisURL = redistest.Start(t).URL()
			}
			g, tok := fixture(t, cfg)
			call := Call{Route: scored, Bearer: tok, Front: "grpc", Local: tc.local}
			_, first, err := g.Admit(context.Background(), call, nil)
			if err != nil || !first.Holds() {
				t.Fatalf("first call: got %v, holds %v; want admitted, holding its place", err, first.Holds())
			}
			if due := first.State == ""; due != tc.wantDue {
				t.Fatalf("first call's rate left for later: got %v (RateLimit %q); want %v", due, first.State, tc.wantDue)
			}
			if err := first.AdmitRate(); err != nil || first.Policy != `"rate";q=1;w=1` || first.State != `"rate";r=0;t=1` {
				t.Fatalf("first call's rate: got %v, %q %q; want allowed, \"rate\";q=1;w=1 \"rate\";r=0;t=1", err, first.Policy, first.State)
			}
			defer first.Release()
			_, second, err := g.Admit(context.Background(), call, nil)
			if tc.wantDue {
				if err != nil || !second.Holds() {
					t.Fatalf("second call on its headers: got %v, holds %v; want admitted without its rate", err, second.Holds())
				}
				err = second.AdmitDecode(context.Background(), 100)
				if again := second.AdmitRate(); again != nil {
					t.Errorf("the rate decided twice: got %v; want nil the second time", again)
				}
			}
			if status.Code(err) != codes.ResourceExhausted || second.State != `"rate";r=0;t=1` {
				t.Errorf("second call: got %v, RateLimit %q; want ResourceExhausted, \"rate\";r=0;t=1", err, second.State)
			}
			second.Release()
			if second.Holds() || admitted(t, g.Budget) != 0 {
				t.Errorf("the refused call after its release: holds %v, budget %d; want nothing", second.Holds(), admitted(t, g.Budget))
			}
		})
	}
}
