package token

import (
	"container/list"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// ThrottleConfig limits failed Authenticate attempts with three token buckets per attempt: one
// keyed by the client id and the caller's address together, one by the address alone and one by
// the client id across all addresses. An attempt goes ahead only if all three have a token.
// A zero field takes its default.
//
// Keying the tight client limit on the pair means that failures from one address cannot lock
// the client out at another; the generous per-client-id bucket still caps the guesses at one
// client id from any number of addresses, so that brute force stays infeasible, and only an
// attack from many addresses at once can empty it.
type ThrottleConfig struct {
	// PerClient limits one client id from one address (an IPv6 address counts by its /64).
	// Defaults to a burst of 10 failures, then one more every 6 s.
	PerClient Bucket
	// PerAddress limits one address, whatever the client id. Defaults to a burst of 20
	// failures, then one more every 3 s: several clients may share an address behind NAT.
	PerAddress Bucket
	// PerClientGlobal limits one client id from all addresses together. Defaults to a burst of
	// 200 failures, then one more every second: at most about 86,400 guesses a day at one
	// client id, however many addresses guess. With the default PerClient (one guess per
	// address every 6 s after a burst of 10), emptying it at once takes 20 addresses (IPv4
	// addresses or IPv6 /64s) and keeping it empty takes more than 6 failing without pause;
	// while it is empty the client id is throttled from every address.
	PerClientGlobal Bucket
	// MaxTracked caps the buckets kept per kind (default 10000), so a flood of made-up client
	// ids or addresses cannot grow memory without limit. A full bucket is the same as no bucket
	// and is dropped; beyond the cap the least recently used bucket is dropped. The buckets of
	// the client ids in the registry are kept apart and never dropped for room: the registry
	// bounds them (each client's per-address buckets are capped at MaxTracked too, and only
	// failures at that client id, paced by its PerClientGlobal bucket, add to them).
	MaxTracked int
}

// Bucket is a token bucket of failed attempts: Burst failures in a row, then one more per Refill.
type Bucket struct {
	Burst  int
	Refill time.Duration
}

var (
	defaultPerClient       = Bucket{Burst: 10, Refill: 6 * time.Second}
	defaultPerAddress      = Bucket{Burst: 20, Refill: 3 * time.Second}
	defaultPerClientGlobal = Bucket{Burst: 200, Refill: time.Second}
)

const defaultMaxTracked = 10000

// Longest key kept: a client id longer than any valid one, or a host name (addresses are
// shorter), is cut so that the memory per bucket is bounded too.
const maxThrottleKey = maxClientIDLen + 1

func (c ThrottleConfig) withDefaults() (ThrottleConfig, error) {
	var err error
	if c.PerClient, err = c.PerClient.withDefault(defaultPerClient, "PerClient"); err != nil {
		return c, err
	}
	if c.PerAddress, err = c.PerAddress.withDefault(defaultPerAddress, "PerAddress"); err != nil {
		return c, err
	}
	if c.PerClientGlobal, err = c.PerClientGlobal.withDefault(defaultPerClientGlobal, "PerClientGlobal"); err != nil {
		return c, err
	}
	if c.MaxTracked < 0 {
		return c, fmt.Errorf("throttle: MaxTracked %d is negative", c.MaxTracked)
	}
	if c.MaxTracked == 0 {
		c.MaxTracked = defaultMaxTracked
	}
	return c, nil
}

func (b Bucket) withDefault(d Bucket, name string) (Bucket, error) {
	if b.Burst < 0 || b.Refill < 0 {
		return b, fmt.Errorf("throttle: %s has a negative field", name)
	}
	if b.Burst == 0 {
		b.Burst = d.Burst
	}
	if b.Refill == 0 {
		b.Refill = d.Refill
	}
	return b, nil
}

// pairKey is a (client id, address) pair. A struct rather than a joined string, so that no
// choice of client id can make two pairs collide.
type pairKey struct{ client, remote string }

// throttle holds the buckets under one lock, so that an attempt takes from all three kinds or
// from none. Buckets of client ids in the registry (known) are kept apart from those of other
// ids: a flood of made-up ids or addresses evicts only its own kind, never the buckets that
// hold a real client's failures (issue 19: 12,000 junk failures from 632 addresses used to
// evict a drained client's buckets, and the next 100 guesses at it were all checked).
type throttle struct {
	mu     sync.Mutex
	cfg    ThrottleConfig
	pair   *buckets[pairKey] // PerClient, unknown client ids: client id from one address
	remote *buckets[string]  // PerAddress: address, any client id
	client *buckets[string]  // PerClientGlobal, unknown client ids: client id, any address
	known  *knownBuckets     // PerClientGlobal and PerClient of the client ids in the registry
	shared *redisStore       // nil unless the limits are shared through Redis (throttle_redis.go)
}

func newThrottle(c ThrottleConfig) *throttle {
	return &throttle{
		cfg:    c,
		pair:   newBuckets[pairKey](c.PerClient, c.MaxTracked),
		remote: newBuckets[string](c.PerAddress, c.MaxTracked),
		client: newBuckets[string](c.PerClientGlobal, c.MaxTracked),
		known:  &knownBuckets{byID: map[string]*list.Element{}, lru: list.New()},
	}
}

// blocked is the wait before the caller may try again: the longest wait of its empty buckets,
// or 0. It takes nothing, so concurrent correct logins are never refused for being concurrent.
// Both tables of client ids are asked, so that an id added to or removed from the registry
// keeps the failures counted under its old standing. With Redis, the shared buckets are asked
// too; this replica's own never stop counting, so that it falls back on them if Redis goes.
func (t *throttle) blocked(clientKey, remoteKey string, now time.Time) time.Duration {
	w := t.blockedHere(clientKey, remoteKey, now)
	if t.shared != nil {
		if sw, ok := t.shared.wait(t.cfg, clientKey, remoteKey, now); ok {
			w = max(w, sw)
		}
	}
	return w
}

func (t *throttle) blockedHere(clientKey, remoteKey string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waitLocked(clientKey, remoteKey, now)
}

// waitLocked is blockedHere under the lock.
func (t *throttle) waitLocked(clientKey, remoteKey string, now time.Time) time.Duration {
	p := pairKey{clientKey, remoteKey}
	w := max(t.pair.wait(p, now), t.remote.wait(remoteKey, now), t.client.wait(clientKey, now))
	if e, ok := t.known.byID[clientKey]; ok {
		k := e.Value.(*knownClient)
		w = max(w, t.cfg.PerClientGlobal.wait(k.global, now), k.pairs.wait(remoteKey, now))
	}
	return w
}

// fail counts one failed attempt in all three buckets, after the secret check failed. Guesses
// that were checked at the same moment may take a bucket below zero; the debt is repaid at the
// refill rate before the next attempt, so they buy no extra guesses over time. known says
// whether the client id is in the registry. locked reports a lockout: the caller could try
// before this failure and cannot after it. With Redis the shared buckets decide it (so that
// of several replicas exactly one counts it), else this replica's own.
func (t *throttle) fail(clientKey, remoteKey string, known bool, now time.Time) (locked bool) {
	locked = t.failHere(clientKey, remoteKey, known, now)
	if t.shared != nil {
		if sharedLocked, ok := t.shared.take(t.cfg, clientKey, remoteKey, now); ok {
			locked = sharedLocked
		}
	}
	return locked
}

func (t *throttle) failHere(clientKey, remoteKey string, known bool, now time.Time) (locked bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.waitLocked(clientKey, remoteKey, now)
	t.remote.take(remoteKey, now)
	if !known {
		t.pair.take(pairKey{clientKey, remoteKey}, now)
		t.client.take(clientKey, now)
	} else {
		t.known.take(t.cfg, clientKey, remoteKey, now)
	}
	return before == 0 && t.waitLocked(clientKey, remoteKey, now) > 0
}

// fill is the state of one token bucket, kept as the time at which it will be full again
// (the generic cell rate algorithm): a failure moves that time one refill later, and the
// bucket is empty while it lies more than (burst-1) refills ahead. The zero fill is a full
// bucket. last is the latest time the bucket was counted at; an earlier now counts as last,
// so a clock stepping back refills nothing and drains nothing either. Integer arithmetic
// only: a bucket in Redis (throttle_redis.go, in microseconds) gives the very same waits.
type fill struct{ full, last time.Time }

func (f fill) at(now time.Time) time.Time {
	if now.Before(f.last) {
		return f.last
	}
	return now
}

// wait is how long until the bucket holds one token again, or 0 if it holds one now.
func (b Bucket) wait(f fill, now time.Time) time.Duration {
	if f.full.IsZero() {
		return 0
	}
	return max(f.full.Sub(f.at(now))-time.Duration(b.Burst-1)*b.Refill, 0)
}

// take counts one failure.
func (b Bucket) take(f fill, now time.Time) fill {
	now = f.at(now)
	if f.full.Before(now) {
		f.full = now
	}
	return fill{full: f.full.Add(b.Refill), last: now}
}

// isFull reports whether the bucket holds its whole burst, the same as no bucket at all.
func (f fill) isFull(now time.Time) bool { return !f.full.After(f.at(now)) }

// buckets is one kind of bucket with least-recently-used eviction. Not safe on its own; the
// throttle's lock guards it.
type buckets[K comparable] struct {
	b     Bucket
	max   int
	index map[K]*list.Element
	lru   *list.List // of *bucket[K], most recently used at the front
}

type bucket[K comparable] struct {
	key K
	f   fill
}

func newBuckets[K comparable](b Bucket, maxTracked int) *buckets[K] {
	return &buckets[K]{b: b, max: maxTracked, index: map[K]*list.Element{}, lru: list.New()}
}

// wait is the wait of key's bucket; an untracked key has a full bucket.
func (bs *buckets[K]) wait(key K, now time.Time) time.Duration {
	e, ok := bs.index[key]
	if !ok {
		return 0
	}
	return bs.b.wait(e.Value.(*bucket[K]).f, now)
}

func (bs *buckets[K]) take(key K, now time.Time) {
	e, ok := bs.index[key]
	if !ok {
		e = bs.lru.PushFront(&bucket[K]{key: key})
		bs.index[key] = e
	}
	b := e.Value.(*bucket[K])
	b.f = bs.b.take(b.f, now)
	bs.lru.MoveToFront(e)
	bs.evict(now)
}

// evict drops full buckets from the cold end, then the coldest ones beyond the cap. Dropping a
// bucket that is not full forgives its failures; the other two kinds still hold, and filling a
// table takes MaxTracked failures, which the per-address buckets pace.
func (bs *buckets[K]) evict(now time.Time) {
	for e := bs.lru.Back(); e != nil && e != bs.lru.Front(); e = bs.lru.Back() {
		if bs.lru.Len() <= bs.max && !e.Value.(*bucket[K]).f.isFull(now) {
			break
		}
		bs.remove(e)
	}
}

// allFull reports whether every bucket has refilled, after dropping those that have.
func (bs *buckets[K]) allFull(now time.Time) bool {
	bs.evict(now)
	f := bs.lru.Front()
	return f == nil || (bs.lru.Len() == 1 && f.Value.(*bucket[K]).f.isFull(now))
}

func (bs *buckets[K]) remove(e *list.Element) {
	bs.lru.Remove(e)
	delete(bs.index, e.Value.(*bucket[K]).key)
}

// knownBuckets are the buckets of client ids in the registry. Their number is bounded by the
// registry, not by a cap, so no churn of other ids or addresses can push one out: an entry
// goes only once all its buckets are full again. A client's per-address buckets are capped at
// MaxTracked, but only failures at that very client id add to them, and those are paced by its
// PerClientGlobal bucket (200, then one a second by default), while a drained PerClient bucket
// is full again after Burst refills (60 s by default): churning it out would take longer than
// waiting.
type knownBuckets struct {
	byID map[string]*list.Element
	lru  *list.List // of *knownClient, most recently failed at the front
}

type knownClient struct {
	id     string
	global fill             // PerClientGlobal
	pairs  *buckets[string] // PerClient, by address
}

func (kb *knownBuckets) take(c ThrottleConfig, clientKey, remoteKey string, now time.Time) {
	e, ok := kb.byID[clientKey]
	if !ok {
		e = kb.lru.PushFront(&knownClient{id: clientKey, pairs: newBuckets[string](c.PerClient, c.MaxTracked)})
		kb.byID[clientKey] = e
	}
	k := e.Value.(*knownClient)
	k.global = c.PerClientGlobal.take(k.global, now)
	k.pairs.take(remoteKey, now)
	kb.lru.MoveToFront(e)
	// Drop the clients whose buckets have all refilled, from the cold end: they hold nothing.
	for e := kb.lru.Back(); e != nil && e != kb.lru.Front(); e = kb.lru.Back() {
		k := e.Value.(*knownClient)
		if !k.global.isFull(now) || !k.pairs.allFull(now) {
			break
		}
		kb.lru.Remove(e)
		delete(kb.byID, k.id)
	}
}

// clientKey bounds the length of a client id used as a bucket key.
func clientKey(clientID string) string {
	if len(clientID) > maxThrottleKey {
		return clientID[:maxThrottleKey]
	}
	return clientID
}

// remoteKey is the host part of remoteAddr ("host:port", "[v6]:port" or a bare host). An IPv6
// address counts by its /64, the block one subscriber usually holds. An empty remoteAddr is the
// key "", one address like any other: every caller without an address shares its buckets.
func remoteKey(remoteAddr string) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.WithZone("").Unmap()
		if ip.Is6() {
			p, _ := ip.Prefix(64)
			return p.String()
		}
		return ip.String()
	}
	if len(host) > maxThrottleKey {
		return host[:maxThrottleKey]
	}
	return host
}
