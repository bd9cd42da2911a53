package gate

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// TestAdmitDeclaredSize: the declared size is held to the route's body limit inside the gate's
// one step, after the token and the transport's check and before the client's limits: a call
// over the limit by one byte is refused without spending the client's rate (rate 1, burst 1: the
// call after it is admitted), one at the limit is admitted and spends it, a size not declared
// (-1, as net/http says) is left to the read, and a caller without a token learns only that.
func TestAdmitDeclaredSize(t *testing.T) {
	t.Parallel()
	const limit = 100
	sized := &routes.Route{Method: scored.Method, Ruled: true, Rule: scored.Rule, BodyLimit: limit}
	refused := errors.New("415")
	for _, tc := range []struct {
		name      string
		size      int64
		noToken   bool
		check     error
		wantCode  codes.Code
		wantErr   error
		wantSpent bool // the call spent the client's one request: the next is refused for the rate
	}{
		{"at the limit", limit, false, nil, codes.OK, nil, true},
		{"over the limit by one byte", limit + 1, false, nil, codes.Unknown, ErrTooLarge, false},
		{"not declared", -1, false, nil, codes.OK, nil, true},
		{"none declared", 0, false, nil, codes.OK, nil, true},
		{"over the limit without a token", limit + 1, true, nil, codes.Unauthenticated, nil, false},
		{"over the limit, the check refuses first", limit + 1, false, refused, codes.Unknown, refused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, tok := fixture(t, quota.Config{Rate: 1, Burst: 1})
			bearer := tok
			if tc.noToken {
				bearer = ""
			}
			check := func() error { return tc.check }
			_, ticket, err := g.Admit(context.Background(), Call{Route: sized, Bearer: bearer, Front: "http", Size: tc.size}, check)
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) || tc.wantErr == nil && status.Code(err) != tc.wantCode {
				t.Fatalf("got %v; want %v %v", err, tc.wantCode, tc.wantErr)
			}
			if err != nil && (ticket.Holds() || ticket.Policy != "") {
				t.Errorf("refused call: holds %v, RateLimit-Policy %q; want nothing held, no rate decided", ticket.Holds(), ticket.Policy)
			}
			ticket.Release()
			_, next, err := g.Admit(context.Background(), Call{Route: sized, Bearer: tok, Front: "http", Size: limit}, nil)
			if spent := status.Code(err) == codes.ResourceExhausted; spent != tc.wantSpent {
				t.Errorf("the next call refused for the rate: got %v (%v); want %v", spent, err, tc.wantSpent)
			}
			next.Release()
		})
	}
}

// TestAdmitRecordSize: a batch record's length is its declared size, held to its route's limit
// before it waits for a place among its stream's records or for budget: over by one byte it is
// refused holding nothing, at the limit admitted with its cost.
func TestAdmitRecordSize(t *testing.T) {
	t.Parallel()
	const limit = 100
	sized := &routes.Route{Method: scored.Method, Ruled: true, Rule: scored.Rule, BodyLimit: limit}
	g, tok := fixture(t, quota.Config{})
	ctx, st, err := g.Admit(context.Background(), Call{Route: scored, Bearer: tok, Front: "http", Stream: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	reserve := admitted(t, g.Budget)
	_, over, err := g.Admit(ctx, Call{Route: sized, Bearer: tok, Front: "http", Size: limit + 1, Record: st.Stream(), Cost: 1 << 20}, nil)
	if !errors.Is(err, ErrTooLarge) || over.Holds() || admitted(t, g.Budget) != reserve {
		t.Errorf("record over the limit: got %v, holds %v, budget %d; want ErrTooLarge, nothing held, %d", err, over.Holds(), admitted(t, g.Budget), reserve)
	}
	_, at, err := g.Admit(ctx, Call{Route: sized, Bearer: tok, Front: "http", Size: limit, Record: st.Stream(), Cost: 1 << 20}, nil)
	if err != nil || !at.Holds() || admitted(t, g.Budget) != reserve+1<<20 {
		t.Errorf("record at the limit: got %v, holds %v, budget %d; want admitted with its cost, %d", err, at.Holds(), admitted(t, g.Budget), reserve+1<<20)
	}
	at.Release()
	var none *Ticket
	none.Release() // nil-safe
}
