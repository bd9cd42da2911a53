// Package reqinfo carries what is learnt of one request through its context, so that whichever
// layer learns a fact (the client id, a stream's counts) makes it known to the layer that logs.
package reqinfo

import (
	"context"
	"log/slog"
	"net/http"
)

// Info is one request's facts.
type Info struct {
	ID       string // the request id (the caller's x-request-id when sane)
	Route    string // the HTTP path or the gRPC method, as the metrics label it
	ClientID string // the authenticated client, once known
	// HTTPRequest is the JSON front's request, as the caller sent it (nil on gRPC): a login reads
	// the caller's address from it (X-Forwarded-For, the connection's address), and only then.
	HTTPRequest *http.Request
	Stream      []slog.Attr // what a stream did (its counts, why it ended), for its one log line
}

type key struct{}

// With returns ctx carrying ri.
func With(ctx context.Context, ri *Info) context.Context { return context.WithValue(ctx, key{}, ri) }

// From is the request's info, or nil outside a request.
func From(ctx context.Context) *Info {
	ri, _ := ctx.Value(key{}).(*Info)
	return ri
}

// ID is the request's id, or "".
func ID(ctx context.Context) string {
	if ri := From(ctx); ri != nil {
		return ri.ID
	}
	return ""
}
