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
	// and is dropped; beyond the cap the least recently used bucket is dropped.
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

// throttle holds the three kinds of buckets under one lock, so that an attempt takes from all
// of them or from none.
type throttle struct {
	mu     sync.Mutex
	pair   *buckets[pairKey] // PerClient: client id from one address
	remote *buckets[string]  // PerAddress: address, any client id
	client *buckets[string]  // PerClientGlobal: client id, any address
}

func newThrottle(c ThrottleConfig) *throttle {
	return &throttle{
		pair:   newBuckets[pairKey](c.PerClient, c.MaxTracked),
		remote: newBuckets[string](c.PerAddress, c.MaxTracked),
		client: newBuckets[string](c.PerClientGlobal, c.MaxTracked),
	}
}

// blocked is the wait before the caller may try again: the longest wait of its empty buckets,
// or 0. It takes nothing, so concurrent correct logins are never refused for being concurrent.
func (t *throttle) blocked(clientKey, remoteKey string, now time.Time) time.Duration {
	p := pairKey{clientKey, remoteKey}
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(t.pair.wait(p, now), t.remote.wait(remoteKey, now), t.client.wait(clientKey, now))
}

// fail counts one failed attempt in all three buckets, after the secret check failed. Guesses
// that were checked at the same moment may take a bucket below zero; the debt is repaid at the
// refill rate before the next attempt, so they buy no extra guesses over time.
func (t *throttle) fail(clientKey, remoteKey string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pair.take(pairKey{clientKey, remoteKey}, now)
	t.remote.take(remoteKey, now)
	t.client.take(clientKey, now)
}

// buckets is one kind of bucket with least-recently-used eviction. Not safe on its own; the
// throttle's lock guards it.
type buckets[K comparable] struct {
	burst  float64
	refill time.Duration
	max    int
	index  map[K]*list.Element
	lru    *list.List // of *bucket[K], most recently used at the front
}

type bucket[K comparable] struct {
	key    K
	tokens float64
	at     time.Time
}

func newBuckets[K comparable](b Bucket, maxTracked int) *buckets[K] {
	return &buckets[K]{burst: float64(b.Burst), refill: b.Refill, max: maxTracked,
		index: map[K]*list.Element{}, lru: list.New()}
}

// level is the bucket's content at now; an untracked key has a full bucket.
func (bs *buckets[K]) level(b *bucket[K], now time.Time) float64 {
	elapsed := max(now.Sub(b.at), 0) // a clock stepping back refills nothing
	return min(bs.burst, b.tokens+float64(elapsed)/float64(bs.refill))
}

func (bs *buckets[K]) wait(key K, now time.Time) time.Duration {
	e, ok := bs.index[key]
	if !ok {
		return 0
	}
	lvl := bs.level(e.Value.(*bucket[K]), now)
	if lvl >= 1 {
		return 0
	}
	return max(time.Duration((1-lvl)*float64(bs.refill)), 1)
}

func (bs *buckets[K]) take(key K, now time.Time) {
	e, ok := bs.index[key]
	if !ok {
		e = bs.lru.PushFront(&bucket[K]{key: key, tokens: bs.burst, at: now})
		bs.index[key] = e
	}
	b := e.Value.(*bucket[K])
	b.tokens, b.at = bs.level(b, now)-1, now
	bs.lru.MoveToFront(e)
	bs.evict(now)
}

// evict drops full buckets from the cold end, then the coldest ones beyond the cap. Dropping a
// bucket that is not full forgives its failures; the other two kinds still hold, and filling a
// table takes MaxTracked failures, which the per-address buckets pace.
func (bs *buckets[K]) evict(now time.Time) {
	for e := bs.lru.Back(); e != nil && e != bs.lru.Front(); e = bs.lru.Back() {
		if bs.lru.Len() <= bs.max && bs.level(e.Value.(*bucket[K]), now) < bs.burst {
			break
		}
		bs.remove(e)
	}
}

func (bs *buckets[K]) remove(e *list.Element) {
	bs.lru.Remove(e)
	delete(bs.index, e.Value.(*bucket[K]).key)
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
