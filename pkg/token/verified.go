package token

import (
	"sync"
	"time"
)

// maxVerified bounds the cache of verified tokens; when it is full it starts over.
const maxVerified = 8192

// verifiedCache remembers tokens whose signature and claims were verified, so a client sending
// the same token with every request pays for the Ed25519 check once instead of on every call
// (the check is most of the cost of a small scoring request). It belongs to one key set: a
// reload makes a new key set with an empty cache, so removing a key takes effect at once.
// Only the expiry can change the answer for a cached token, and Verify checks it on every hit.
type verifiedCache struct {
	mu      sync.RWMutex
	entries map[verifiedKey]Claims
}

// verifiedKey names what was verified: the token, for which audience, by which issuer (the iss
// check depends on it).
type verifiedKey struct{ issuer, service, token string }

func newVerifiedCache() *verifiedCache {
	return &verifiedCache{entries: make(map[verifiedKey]Claims)}
}

func (c *verifiedCache) get(k verifiedKey) (Claims, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	claims, ok := c.entries[k]
	return claims, ok
}

func (c *verifiedCache) put(k verifiedKey, claims Claims) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxVerified {
		clear(c.entries)
	}
	c.entries[k] = claims
}

// stillValid is jwt's expiry rule with the leeway: a token is good until exp + leeway.
func stillValid(claims Claims, now time.Time, leeway time.Duration) bool {
	return now.Before(claims.ExpiresAt.Add(leeway))
}
