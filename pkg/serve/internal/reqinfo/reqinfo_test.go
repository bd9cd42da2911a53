package reqinfo

import (
	"context"
	"testing"
)

// TestWithFrom: a context carries the one Info it was given, by pointer, so that what a later
// layer writes into it (the client id) is what an earlier one reads back; outside a request there
// is none, and its id is "".
func TestWithFrom(t *testing.T) {
	t.Parallel()
	ri := &Info{ID: "req-1", Route: "/api/x"}
	ctx := With(context.Background(), ri)
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		info   *Info
		wantID string
	}{
		{"with", ctx, ri, "req-1"},
		{"a context derived from it", context.WithoutCancel(ctx), ri, "req-1"},
		{"without", context.Background(), nil, ""},
		{"replaced", With(ctx, &Info{ID: "req-2"}), nil, "req-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := From(tc.ctx)
			if tc.info != nil && got != tc.info {
				t.Errorf("From: got %p; want the Info given, %p", got, tc.info)
			}
			if tc.info == nil && tc.wantID == "" && got != nil {
				t.Errorf("From: got %+v; want nil outside a request", got)
			}
			if id := ID(tc.ctx); id != tc.wantID {
				t.Errorf("ID: got %q; want %q", id, tc.wantID)
			}
		})
	}
	// A layer that learns the client writes it where the logging layer reads it.
	From(ctx).ClientID = "demo"
	if ri.ClientID != "demo" {
		t.Errorf("ClientID after a later layer set it: got %q; want demo", ri.ClientID)
	}
}
