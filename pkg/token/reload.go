package token

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// fingerprints are SHA-256 sums of the files the current state was loaded from: the clients
// file's content, and the names and contents of the key files. A reload parses only what
// changed. Content, not size and mtime: a file rewritten within the same mtime tick, or
// restored with its old mtime, is still a change; and reading a 4 MiB file every interval
// costs milliseconds, parsing it far more.
type fingerprints struct{ clients, keys [sha256.Size]byte }

// Reload re-reads the clients file and the keys dir and reports whether either changed. A
// part whose files are byte for byte those last loaded is not parsed again (its tokens'
// verification cache stays warm). A changed part is replaced only if it loaded without a
// problem; otherwise the last good one stays and the error says why (file:line for YAML; what
// the file is, when something other than a regular file was found at its path). changed can be
// true along with an error: one part was taken, the other refused.
// Authenticate and Verify may run concurrently; each sees the old or the new version, whole.
func (i *Issuer) Reload() (changed bool, err error) {
	i.reload.Lock()
	defer i.reload.Unlock()
	next, changed, err := i.load(*i.state.Load())
	if changed {
		i.state.Store(&next)
		ch := make(chan struct{})
		close(*i.changed.Swap(&ch))
	}
	if err != nil {
		return changed, fmt.Errorf("token: reload: %w", err)
	}
	return changed, nil
}

// load makes the state that follows cur (the zero state at start): each part is loaded again
// when its files changed, and kept from cur when they did not or when they have a problem.
// The caller holds i.reload, or is New.
func (i *Issuer) load(cur state) (next state, changed bool, err error) {
	next = cur
	var errs []error
	data, sum, err := i.readClients()
	switch {
	case err != nil:
		errs = append(errs, err)
	case cur.clients != nil && sum == i.loaded.clients:
		i.seen = i.opts.Now()
	default:
		now := i.opts.Now()
		if reg, err := i.loadClients(cur.clients, i.seen, data); err != nil {
			errs = append(errs, err)
		} else {
			next.clients, i.loaded.clients, i.seen, changed = reg, sum, now, true
		}
	}
	if i.opts.KeysDir == "" {
		if cur.keys == nil {
			next.keys, changed = i.ephemeral, true
		}
		return next, changed, errors.Join(errs...)
	}
	files, sum, readErr := readKeyFiles(i.opts.KeysDir)
	if readErr == nil && cur.keys != nil && sum == i.loaded.keys {
		return next, changed, errors.Join(errs...)
	}
	if ks, err := parseKeys(i.opts.KeysDir, files, readErr); err != nil {
		errs = append(errs, err)
	} else {
		next.keys, i.loaded.keys, changed = ks, sum, true
	}
	return next, changed, errors.Join(errs...)
}

// readClients reads the clients file, unparsed, and its fingerprint; nothing without one
// (dev mode).
func (i *Issuer) readClients() ([]byte, [sha256.Size]byte, error) {
	if i.opts.ClientsFile == "" {
		return nil, [sha256.Size]byte{}, nil
	}
	data, err := readClientsFile(i.opts.ClientsFile, i.afterRead)
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	return data, sha256.Sum256(data), nil
}

// loadClients parses the clients file's data into a registry. prev is the registry it
// replaces (nil at start) and prevSeen the last time the file was found to hold it: a client
// prev did not have with the same secret hash was added, re-added or re-keyed since, so tokens
// issued before prevSeen are void for it.
func (i *Issuer) loadClients(prev *registry, prevSeen time.Time, data []byte) (*registry, error) {
	var list []*client
	if i.opts.ClientsFile != "" {
		var err error
		if list, err = parseClients(i.opts.ClientsFile, data); err != nil {
			return nil, err
		}
	}
	if len(list) == 0 && i.demo == nil {
		return nil, fmt.Errorf("%s: no clients defined", i.opts.ClientsFile)
	}
	dummy, err := dummyHash()
	if err != nil {
		return nil, err
	}
	reg := &registry{byID: make(map[string]*client, len(list)+1), dummy: dummy, since: map[string]time.Time{}}
	for _, c := range list {
		if i.demo != nil && c.id == DevClientID {
			return nil, fmt.Errorf("%s:%d: clientId %q is reserved for the dev-mode demo client", i.opts.ClientsFile, c.line, c.id)
		}
		reg.byID[c.id] = c
	}
	if i.demo != nil {
		reg.byID[DevClientID] = i.demo
	}
	if prev != nil {
		for id, c := range reg.byID {
			old := prev.byID[id]
			switch {
			case old == nil || old.fingerprint != c.fingerprint:
				reg.since[id] = prevSeen
			case !prev.since[id].IsZero():
				reg.since[id] = prev.since[id]
			}
		}
	}
	return reg, nil
}

// Changed is a channel closed at the next reload that replaces the clients or the keys: a call
// that outlives its token's first check (a stream) waits on it to check the token again. Take
// it before the check, so that a reload between the two is not missed.
func (i *Issuer) Changed() <-chan struct{} { return *i.changed.Load() }

// ValidUntil is when Verify starts refusing claims as expired: their exp and the leeway.
func (i *Issuer) ValidUntil(c Claims) time.Time { return c.ExpiresAt.Add(i.opts.Leeway) }
