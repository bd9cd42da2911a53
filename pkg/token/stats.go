package token

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// LoginStats counts the outcomes of Authenticate since the Issuer was made, for the serving
// frame's metrics. Every call for a known service counts in one outcome, save the rare one whose
// token could not be signed.
type LoginStats struct {
	Success       uint64 // a token was issued
	InvalidClient uint64 // unknown client id or wrong secret (ErrNotAuthenticated)
	Forbidden     uint64 // the client has no right on the service (ErrPermissionDenied)
	Throttled     uint64 // refused before any check: a bucket of failures was empty (*ThrottledError)
	Busy          uint64 // no hashing slot in time (*BusyError)
	// Lockouts counts the failures that locked a caller out: before it the caller could try, after
	// it one of its buckets was empty. With Redis, exactly one replica counts each lockout.
	Lockouts uint64
}

// loginCounters are LoginStats as they are counted.
type loginCounters struct {
	success, invalidClient, forbidden, throttled, busy, lockouts atomic.Uint64
}

// LoginStats returns the counts so far.
func (i *Issuer) LoginStats() LoginStats {
	c := &i.logins
	return LoginStats{Success: c.success.Load(), InvalidClient: c.invalidClient.Load(), Forbidden: c.forbidden.Load(),
		Throttled: c.throttled.Load(), Busy: c.busy.Load(), Lockouts: c.lockouts.Load()}
}

// KeyInfo describes one key of the loaded key set, without its key material.
type KeyInfo struct {
	Kid     string
	Signing bool // the key that signs new tokens (the greatest kid)
	// Created is the time in the kid, for kids of GenerateKey's form (20261122T101500Z-3f9a1c2b);
	// zero for other kids.
	Created time.Time
	// RotateBy is Created + Options.KeyLifetime: when the key should have been replaced. Keys
	// still sign and verify after it (an expired signing key must not stop logins); it is the
	// date an operator is warned of. Zero when Created is unknown or KeyLifetime is 0.
	RotateBy time.Time
}

// Keys describes the loaded key set, the signing key first, then by kid, newest first.
func (i *Issuer) Keys() []KeyInfo {
	ks := i.state.Load().keys
	out := make([]KeyInfo, 0, len(ks.public))
	for kid := range ks.public {
		k := KeyInfo{Kid: kid, Signing: kid == ks.signer.kid, Created: kidTime(kid)}
		if !k.Created.IsZero() && i.opts.KeyLifetime > 0 {
			k.RotateBy = k.Created.Add(i.opts.KeyLifetime)
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b KeyInfo) int { return strings.Compare(b.Kid, a.Kid) })
	return out
}

// kidTime reads the UTC timestamp GenerateKey puts at the start of a kid ("dev-" allowed before
// it, for the ephemeral key); zero when there is none.
func kidTime(kid string) time.Time {
	kid = strings.TrimPrefix(kid, "dev-")
	const layout = "20060102T150405Z"
	if len(kid) < len(layout) {
		return time.Time{}
	}
	t, err := time.Parse(layout, kid[:len(layout)])
	if err != nil {
		return time.Time{}
	}
	return t
}

// Version names what is loaded: 12 hex digits of a SHA-256 over the clients file's and the key
// files' fingerprints, the same on every replica that loaded the same files (dev mode's
// ephemeral key is not in it). It changes exactly when a reload took a changed file.
func (i *Issuer) Version() string {
	i.reload.Lock()
	defer i.reload.Unlock()
	h := sha256.New()
	h.Write(i.loaded.clients[:])
	h.Write(i.loaded.keys[:])
	return hex.EncodeToString(h.Sum(nil))[:12]
}
