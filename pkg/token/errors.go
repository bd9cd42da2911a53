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

// What a caller holding a refused token should do differs by cause (get a new token; ask the
// other service; fix the client), so Verify's error also matches exactly one of these with
// errors.Is. Each says what happened to the token, never anything read from it.
var (
	// ErrTokenExpired: the token's lifetime is over.
	ErrTokenExpired = errors.New("token expired")
	// ErrTokenOtherService: a well-formed token of this issuer for the other service.
	ErrTokenOtherService = errors.New("token is for another service")
	// ErrTokenRevoked: a token that was good, whose client has since been removed, given a new
	// secret or registered again.
	ErrTokenRevoked = errors.New("token revoked")
	// ErrTokenUnreadable: anything else (not a JWT, wrongly signed, another issuer's, not valid
	// yet, a claim missing).
	ErrTokenUnreadable = errors.New("token could not be read")
)

// tokenError is Verify's refusal: ErrNotAuthenticated with its kind (one of the ErrToken*
// errors) and a fixed reason for the logs.
type tokenError struct {
	kind   error
	reason string
}

func (e *tokenError) Error() string { return ErrNotAuthenticated.Error() + ": " + e.reason }

// Is makes errors.Is true for ErrNotAuthenticated and for the error's kind.
func (e *tokenError) Is(target error) bool { return target == ErrNotAuthenticated || target == e.kind }

// notAuthenticated is a token refused for kind, with a fixed reason; callers pass constants only,
// never anything taken from the token.
func notAuthenticated(kind error, reason string) error {
	return &tokenError{kind: kind, reason: reason}
}
