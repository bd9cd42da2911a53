package authz

import (
	"context"
	"errors"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// Rights for the life of a call: a stream outlives the check of its token on its headers (a
// reload may drop its client or narrow its permissions; its token expires).

// Revoked is the cause a stream ends with when Watch found its rights gone: Err is the answer a
// call with the stream's token would get now (401 or 403 as a status error).
type Revoked struct{ Err error }

func (r *Revoked) Error() string { return "the stream's rights are gone: " + r.Err.Error() }
func (r *Revoked) Unwrap() error { return r.Err }

// RevokedErr is err's Revoked answer, if it is one.
func RevokedErr(err error) (error, bool) {
	if r, ok := errors.AsType[*Revoked](err); ok {
		return r.Err, true
	}
	return nil, false
}

// Watch checks bearer against the route r's rule at every reload and at the token's expiry, until
// ctx ends, and calls end once (in its own goroutine) with a *Revoked when the check fails.
func (a *Authorizer) Watch(ctx context.Context, r *routes.Route, bearer string, end func(error)) {
	if r == nil || r.Rule.Public {
		return
	}
	go func() {
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			changed := a.issuer.Changed() // before the check: a reload in between is not missed
			until, err := a.check(r, bearer)
			if err != nil {
				end(&Revoked{Err: err})
				return
			}
			// A millisecond past ValidUntil, from which Verify refuses; a timer early just loops.
			timer.Reset(max(time.Until(until)+time.Millisecond, time.Millisecond))
			select {
			case <-changed:
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// check is Authorize's verdict on bearer for r, and until when it holds unless a reload changes it.
func (a *Authorizer) check(r *routes.Route, bearer string) (time.Time, error) {
	claims, err := a.issuer.Verify(bearer, a.service)
	if err != nil {
		return time.Time{}, a.refused(err)
	}
	if _, err := permit(context.Background(), r, claims); err != nil {
		return time.Time{}, err
	}
	return a.issuer.ValidUntil(claims), nil
}
