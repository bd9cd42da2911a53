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
	// ErrBusy means the secret could not be checked now: every hashing slot stayed taken for
	// the queue wait (Options.HashQueueWait). Authenticate returns a *BusyError, which matches
	// it with errors.Is; nothing was counted against the caller. The serving frame answers 503
	// (gRPC Unavailable) with Retry-After.
	ErrBusy = errors.New("busy: too many secrets being checked")
)

// BusyError is ErrBusy with the wait to suggest.
type BusyError struct{ RetryAfter time.Duration }

func (e *BusyError) Error() string {
	return fmt.Sprintf("%v; retry after %ds", ErrBusy, retrySeconds(e.RetryAfter))
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// RetryAfterSeconds is RetryAfter rounded up to whole seconds (at least 1).
func (e *BusyError) RetryAfterSeconds() int64 { return retrySeconds(e.RetryAfter) }

// ThrottledError is returned by Authenticate when too many attempts failed for the client id
// from the caller's address, for the caller's address, or for the client id from all addresses
// together. RetryAfter is the wait until one more attempt is allowed.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed attempts; retry after %ds", retrySeconds(e.RetryAfter))
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds (at least 1), the value an HTTP
// Retry-After header carries.
func (e *ThrottledError) RetryAfterSeconds() int64 { return retrySeconds(e.RetryAfter) }

func retrySeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// notAuthenticated wraps ErrNotAuthenticated with a fixed reason; callers pass constants only,
// never anything taken from the token.
func notAuthenticated(reason string) error {
	return fmt.Errorf("%w: %s", ErrNotAuthenticated, reason)
}
