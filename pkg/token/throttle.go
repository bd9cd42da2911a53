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

// ThrottleConfig limits failed Authenticate attempts with two token buckets per attempt: one
// keyed by client id, one by the caller's address. A zero field takes its default.
type ThrottleConfig struct {
	// PerClient defaults to a burst of 10 failures, then one more every 6 s.
	PerClient Bucket
	// PerAddress defaults to a burst of 20 failures, then one more every 3 s: several clients
	// may share an address behind NAT.
	PerAddress Bucket
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
	defaultPerClient  = Bucket{Burst: 10, Refill: 6 * time.Second}
	defaultPerAddress = Bucket{Burst: 20, Refill: 3 * time.Second}
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

// throttle holds both kinds of buckets under one lock, so that an attempt takes from both or
// from neither.
type throttle struct {
	mu             sync.Mutex
	client, remote *buckets
}

func newThrottle(c ThrottleConfig) *throttle {
	return &throttle{client: newBuckets(c.PerClient, c.MaxTracked), remote: newBuckets(c.PerAddress, c.MaxTracked)}
}

// take reserves one failure on both buckets before the secret is checked, so that concurrent
// guesses cannot overdraw them; when either is empty it takes nothing and returns the wait.
func (t *throttle) take(clientKey, remoteKey string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if wait := max(t.client.wait(clientKey, now), t.remote.wait(remoteKey, now)); wait > 0 {
		return wait
	}
	t.client.take(clientKey, now)
	t.remote.take(remoteKey, now)
	return 0
}

// give returns what take reserved: a successful attempt costs nothing.
func (t *throttle) give(clientKey, remoteKey string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.client.give(clientKey, now)
	t.remote.give(remoteKey, now)
}

// buckets is one kind of bucket with least-recently-used eviction. Not safe on its own; the
// throttle's lock guards it.
type buckets struct {
	burst  float64
	refill time.Duration
	max    int
	index  map[string]*list.Element
	lru    *list.List // of *bucket, most recently used at the front
}

type bucket struct {
	key    string
	tokens float64
	at     time.Time
}

func newBuckets(b Bucket, maxTracked int) *buckets {
	return &buckets{burst: float64(b.Burst), refill: b.Refill, max: maxTracked,
		index: map[string]*list.Element{}, lru: list.New()}
}

// level is the bucket's content at now; an untracked key has a full bucket.
func (bs *buckets) level(b *bucket, now time.Time) float64 {
	elapsed := max(now.Sub(b.at), 0) // a clock stepping back refills nothing
	return min(bs.burst, b.tokens+float64(elapsed)/float64(bs.refill))
}

func (bs *buckets) wait(key string, now time.Time) time.Duration {
	e, ok := bs.index[key]
	if !ok {
		return 0
	}
	lvl := bs.level(e.Value.(*bucket), now)
	if lvl >= 1 {
		return 0
	}
	return max(time.Duration((1-lvl)*float64(bs.refill)), 1)
}

func (bs *buckets) take(key string, now time.Time) {
	e, ok := bs.index[key]
	if !ok {
		e = bs.lru.PushFront(&bucket{key: key, tokens: bs.burst, at: now})
		bs.index[key] = e
	}
	b := e.Value.(*bucket)
	b.tokens, b.at = bs.level(b, now)-1, now
	bs.lru.MoveToFront(e)
	bs.evict(now)
}

func (bs *buckets) give(key string, now time.Time) {
	e, ok := bs.index[key]
	if !ok {
		return
	}
	b := e.Value.(*bucket)
	b.tokens, b.at = min(bs.burst, bs.level(b, now)+1), now
	if b.tokens >= bs.burst {
		bs.remove(e)
	}
}

// evict drops full buckets from the cold end, then the coldest ones beyond the cap. Dropping a
// bucket that is not full forgives its failures; the per-address limit is what still holds
// against an attacker who floods the table to get that.
func (bs *buckets) evict(now time.Time) {
	for e := bs.lru.Back(); e != nil && e != bs.lru.Front(); e = bs.lru.Back() {
		if bs.lru.Len() <= bs.max && bs.level(e.Value.(*bucket), now) < bs.burst {
			break
		}
		bs.remove(e)
	}
}

func (bs *buckets) remove(e *list.Element) {
	bs.lru.Remove(e)
	delete(bs.index, e.Value.(*bucket).key)
}

// clientKey bounds the length of a client id used as a bucket key.
func clientKey(clientID string) string {
	if len(clientID) > maxThrottleKey {
		return clientID[:maxThrottleKey]
	}
	return clientID
}

// remoteKey is the host part of remoteAddr ("host:port", "[v6]:port" or a bare host). An IPv6
// address counts by its /64, the block one subscriber usually holds.
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
