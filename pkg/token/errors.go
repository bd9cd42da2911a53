package token

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotAuthenticated is the answer for an unknown client, a wrong secret and every bad token.
	// Authenticate returns it bare, so that an unknown client and a wrong secret are
	// indistinguishable; Verify wraps it with a reason from a fixed set of phrases.
	ErrNotAuthenticated = errors.New("not authenticated")
	// ErrPermissionDenied means the caller is who it says but has no right on the service or
	// endpoint it asked for.
	ErrPermissionDenied = errors.New("permission denied")
)

// ThrottledError is returned by Authenticate when too many attempts failed for the client id
// from the caller's address, for the caller's address, or for the client id from all addresses
// together. RetryAfter is the wait until one more attempt is allowed.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed attempts; retry after %ds", e.RetryAfterSeconds())
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds (at least 1), the value an HTTP
// Retry-After header carries.
func (e *ThrottledError) RetryAfterSeconds() int64 {
	s := int64((e.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// notAuthenticated wraps ErrNotAuthenticated with a fixed reason; callers pass constants only,
// never anything taken from the token.
func notAuthenticated(reason string) error {
	return fmt.Errorf("%w: %s", ErrNotAuthenticated, reason)
}
