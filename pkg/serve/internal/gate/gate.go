// Package gate is the one admission of every call, whichever transport brings it: the JSON
// front and the gRPC port each call Admit once per call, when they know the method, the bearer
// token and the declared size and before they read the body; a batch record is admitted as a
// call of its own rpc, within its stream. Admit runs authentication and authorization
// (internal/authz, the one place a token is checked against a route), the transport's own
// refusals on the headers, the declared size against the route's body limit, the client's limits
// (internal/quota) and the memory budget (internal/admission), in that order, and returns a
// Ticket: what the call holds until answered.
//
// A unary call's cost is its size, known only once the body is read or gRPC holds the message:
// the transport then admits it on the same ticket (AdmitBody, AdmitDecode), before a byte is
// decoded; a stream and a record are admitted whole at Admit. Likewise a caller that must not
// wait on the network (Call.Local) has a rate shared through Redis decided later on the same
// ticket, by the call's own goroutine (AdmitRate).
//
// After the gate, a call runs the chain with its ticket handed over explicitly
// (internal/inproc's Call), never as marks that the chain's steps look for.
package gate

import (
	"context"
	"errors"
	"sync"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// Gate admits calls for one server.
type Gate struct {
	Authz  *authz.Authorizer
	Limits *quota.Limiter    // each client's rate and concurrency; nil: none
	Budget *admission.Budget // the memory budget
}

// Call is what a transport knows of a call before it reads its body.
type Call struct {
	Route  *routes.Route // nil: a method not served (refused, fail closed)
	Bearer string        // the bearer token, "" when none was sent
	Front  string        // "http" or "grpc": the budget's refusals are counted by front
	// Size is the body's size where known before the read (Content-Length, a record's line; 0 or
	// -1: none, as on gRPC): over the route's BodyLimit the call is refused, ErrTooLarge.
	Size int64
	// Stream is set for a batch or group stream: a place of its client's concurrency for its
	// life, a pacer for what it reads, and the stream's reserve of the budget.
	Stream bool
	// Record is the stream a batch record is read from (nil: not a record): a record takes a
	// place among its stream's records running at once and its Cost from the budget through its
	// stream, both waited for, never refused: the stream was admitted.
	Record *admission.Stream
	Cost   int64 // a record's cost (the budget's estimate of its heap)
	// Local is set by a caller that must not wait on the network: gRPC's tap handle, where a slow
	// Redis would hold every stream of the connection. A rate shared through Redis is then left
	// to AdmitRate; the concurrency is taken here all the same.
	Local bool
}

// Ticket is one admitted call: the rpc it admits, its client, what it holds of the client's
// limits and of the budget, and the RateLimit headers its answer carries.
type Ticket struct {
	Method string // the full rpc name the ticket admits; a chain refuses it for any other
	Client string // the authenticated client, "" for a public method
	// Policy and State are the RateLimit-Policy and RateLimit headers due to a client with a
	// rate ("" otherwise), on the answer or on the refusal by its limits.
	Policy, State string

	gate   *Gate
	route  *routes.Route
	front  string
	slot   *quota.Slot       // a unary call's or a stream's place in its client's concurrency
	record func()            // a record's place among its stream's records
	grant  *admission.Grant  // the budget's share, once admitted
	stream *admission.Stream // a stream's admission
	rate   bool              // the client's rate is still to be decided (AdmitRate)
	once   sync.Once
}

// ErrTooLarge refuses a Call.Size over the route's body limit; the transport answers it its way.
var ErrTooLarge = errors.New("gate: the declared size is over the route's body limit")

// Admit admits c and returns the context the call runs with (its token's claims, a stream's
// pacer) and the ticket to release once it is answered. check is the transport's own refusal on
// what the headers say of the body (nil: none), run once the caller is authorized, so that a
// caller without a token learns nothing of the body's schema, and before the client's limits, so
// that a refused call costs none of them (an argument, not a field of c: the transport's closure
// then stays on its stack); so is Call.Size, after it. A refused call holds nothing; its ticket
// (never nil) still carries the RateLimit headers its refusal is answered with.
func (g *Gate) Admit(ctx context.Context, c Call, check func() error) (context.Context, *Ticket, error) {
	t := &Ticket{gate: g, route: c.Route, front: c.Front}
	if c.Route != nil {
		t.Method = c.Route.Method
	}
	ctx, err := g.Authz.Authorize(ctx, c.Route, c.Bearer)
	if err != nil {
		return ctx, t, err
	}
	t.Client = authz.ClientID(ctx)
	if check != nil {
		if err := check(); err != nil {
			return ctx, t, err
		}
	}
	if c.Size > c.Route.BodyLimit { // c.Route is not nil: Authorize refuses a method not served
		return ctx, t, ErrTooLarge
	}
	switch {
	case c.Record != nil:
		err = t.admitRecord(ctx, c.Record, c.Cost)
	case c.Stream:
		ctx, err = t.admitStream(ctx)
	default:
		err = t.admitLimits(c.Local)
	}
	if err != nil {
		t.Release() // a refused call holds nothing
	}
	return ctx, t, err
}

// admitLimits applies the client's limits to a unary call: its rate (unless local and shared:
// AdmitRate's), then its calls in progress. A call without a client (a public method) has none.
func (t *Ticket) admitLimits(local bool) (err error) {
	l := t.gate.Limits
	if t.Client == "" || l == nil {
		return nil
	}
	if t.rate = local && l.Shared(); !t.rate {
		if t.Policy, t.State, err = l.Rate(t.Client); err != nil {
			return err
		}
	}
	t.slot, err = l.Acquire(t.Client)
	return err
}

// AdmitRate decides the client's rate that Admit left to the call's own goroutine (Call.Local),
// setting the ticket's RateLimit headers; nil when none is due. A refused ticket still holds its
// place of the client's concurrency until Release.
func (t *Ticket) AdmitRate() (err error) {
	if !t.rate {
		return nil
	}
	t.rate = false
	t.Policy, t.State, err = t.gate.Limits.Rate(t.Client)
	return err
}

// admitStream takes a place of the client's concurrency for the stream's life, then the stream's
// reserve of the budget (429 when the client's streams hold its share, 503 when the streams' half
// is full).
func (t *Ticket) admitStream(ctx context.Context) (_ context.Context, err error) {
	if l := t.gate.Limits; l != nil && t.Client != "" {
		t.Policy = l.Policy(t.Client)
		if ctx, t.slot, err = l.OpenStream(ctx, t.Client); err != nil {
			return ctx, err
		}
	}
	t.stream, err = t.gate.Budget.AdmitStream(t.front, t.Client, t.gate.Limits.Concurrency(t.Client))
	return ctx, err
}

// admitRecord waits for a place among the stream's records running at once, then for the
// record's cost from the budget; an error is the stream's end (the answer is never sent).
func (t *Ticket) admitRecord(ctx context.Context, s *admission.Stream, cost int64) (err error) {
	if t.record, err = quota.RecordSlot(ctx); err != nil {
		return err
	}
	t.grant, err = s.AdmitRecord(ctx, cost)
	return err
}

// AdmitBody admits a JSON call's memory by the body read (a group call by the entries its
// brackets can hold, by its route's model), waiting in the client's queue; the grant is the ticket's until Release.
func (t *Ticket) AdmitBody(ctx context.Context, body []byte) (err error) {
	t.grant, err = t.gate.Budget.AdmitCall(ctx, "http", t.Client, t.gate.Budget.CostOfBody(t.route.Group, body))
	return err
}

// AdmitDecode admits the decoding of a gRPC call's message of size protobuf bytes, waiting in the
// client's queue, after a rate still due; the grant is the ticket's until Release.
func (t *Ticket) AdmitDecode(ctx context.Context, size int64) (err error) {
	if err = t.AdmitRate(); err != nil { // the transport decides it sooner: before the read
		return err
	}
	t.grant, err = t.gate.Budget.AdmitCall(ctx, "grpc", t.Client, t.gate.Budget.Cost(t.route.Group, size, false))
	return err
}

// Stream is a stream's admission, which its records are admitted through (Call.Record); nil else.
func (t *Ticket) Stream() *admission.Stream {
	if t == nil {
		return nil
	}
	return t.stream
}

// Holds reports whether the ticket holds anything to release.
func (t *Ticket) Holds() bool {
	return t.slot.Held() || t.record != nil || t.grant != nil || t.stream != nil
}

// Release gives back everything the ticket holds, budget first, once; nil-safe.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	t.once.Do(func() {
		t.grant.Release()
		t.stream.Release()
		if t.record != nil {
			t.record()
		}
		t.slot.Done()
	})
}
