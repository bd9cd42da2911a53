package serve

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
)

// RequestID returns the id of the request being served, for handlers that log.
func RequestID(ctx context.Context) string { return reqinfo.ID(ctx) }

// noteClient records the authenticated client for the request's log line.
func noteClient(ctx context.Context, clientID string) {
	if ri := reqinfo.From(ctx); ri != nil {
		ri.ClientID = clientID
	}
}
