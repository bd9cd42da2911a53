package serve

// What a handler may ask of the request it serves.

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// RequestID returns the id of the request being served, for handlers that log.
func RequestID(ctx context.Context) string { return reqinfo.ID(ctx) }

// ClaimsFrom returns the verified token claims of the request, for handlers that need the client.
func ClaimsFrom(ctx context.Context) (token.Claims, bool) { return authz.ClaimsFrom(ctx) }
