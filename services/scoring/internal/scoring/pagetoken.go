package scoring

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// pageTokenPurpose names the keys derived for page tokens from the signing keys (a change of
// this text invalidates every page token written before it).
const pageTokenPurpose = "yardstick scoring catalog page token v1"

// pageTokenVersion is the first byte of a page token; pageTokenMAC the bytes of its MAC after it.
const (
	pageTokenVersion = 1
	pageTokenMAC     = 16
)

// PageKeys sign and check the catalog's page tokens. They are derived from the signing keys of
// the keys dir (token.DeriveKeys), which every replica behind a load balancer already shares, so
// a token written by one replica is read by every other; the newest key signs, every key in the
// dir verifies, so a key rotation does not cut a client's paging short. Without a keys dir (dev
// mode) they are random for the process, as dev mode's token signing key is.
type PageKeys struct {
	dir  string
	keys atomic.Pointer[token.DerivedKeys]
}

// NewPageKeys derives the page keys from the keys dir, or makes random ones when dir is "".
func NewPageKeys(dir string) (*PageKeys, error) {
	k := &PageKeys{dir: dir}
	if dir == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("page token key: %w", err)
		}
		k.keys.Store(&token.DerivedKeys{Sign: key, Verify: [][]byte{key}})
		return k, nil
	}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload derives the keys again from the keys dir (after a rotation); on an error the keys in
// use stay.
func (k *PageKeys) Reload() error {
	if k.dir == "" {
		return nil
	}
	d, err := token.DeriveKeys(k.dir, pageTokenPurpose)
	if err != nil {
		return fmt.Errorf("page token keys: %w", err)
	}
	k.keys.Store(&d)
	return nil
}

// pageMAC is the MAC of a page that ends at lastID under key, bound to the whole query but the
// page token and the page size (deterministic proto encoding: a filter added to the request is
// bound without a change here) and to the programs the client sees (their canonical key): a
// token is good only for a client that sees what the client it was written for saw.
func pageMAC(key []byte, query *scoringv1.ListItemsRequest, programs, lastID string) []byte {
	q := proto.Clone(query).(*scoringv1.ListItemsRequest)
	q.PageToken, q.PageSize = nil, nil
	bound, err := proto.MarshalOptions{Deterministic: true}.Marshal(q)
	if err != nil { // a message that was just unmarshalled always marshals
		panic(fmt.Sprintf("page token: %v", err))
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%d\x00%s\x00", len(bound), bound)
	if programs != "" { // shared content only: the token of a bundle without programs, as before them
		fmt.Fprintf(m, "programs\x00%d\x00%s\x00", len(programs), programs)
	}
	m.Write([]byte(lastID))
	return m.Sum(nil)[:pageTokenMAC]
}

// encode is the token of the page after lastID for query, asked by a client seeing programs.
func (k *PageKeys) encode(query *scoringv1.ListItemsRequest, programs measure.Programs, lastID string) string {
	raw := append([]byte{pageTokenVersion}, pageMAC(k.keys.Load().Sign, query, programs.Key(), lastID)...)
	return base64.RawURLEncoding.EncodeToString(append(raw, lastID...))
}

// decode returns the last id of the previous page, or false for a token that this service did
// not write for this query and this set of programs (forged, altered, of another framework,
// strand or filter, or written for a client seeing other programs).
func (k *PageKeys) decode(query *scoringv1.ListItemsRequest, programs measure.Programs, tok string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) < 1+pageTokenMAC || raw[0] != pageTokenVersion {
		return "", false
	}
	mac, lastID := raw[1:1+pageTokenMAC], string(raw[1+pageTokenMAC:])
	for _, key := range k.keys.Load().Verify {
		if hmac.Equal(mac, pageMAC(key, query, programs.Key(), lastID)) {
			return lastID, true
		}
	}
	return "", false
}
