package token

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argonParams are the argon2id cost parameters and sizes of one hash.
type argonParams struct {
	memory  uint32 // KiB
	time    uint32 // passes
	threads uint8
	saltLen int
	keyLen  int
}

// defaultParams follow RFC 9106's second recommendation in memory (64 MiB) with two passes and one
// lane: about 50-100 ms on one core, which is fine for /authToken, a cold path.
var defaultParams = argonParams{memory: 64 * 1024, time: 2, threads: 1, saltLen: 16, keyLen: 32}

// demoParams are deliberately cheap: the dev-mode demo secret is public anyway.
var demoParams = argonParams{memory: 64, time: 1, threads: 1, saltLen: 16, keyLen: 32}

// Caps on the parameters a PHC string may ask for, so that a hostile or mistyped clients file
// cannot make one verification take seconds of CPU or gigabytes of memory.
const (
	maxMemoryKiB = 256 * 1024
	maxTime      = 8
	maxThreads   = 16
	minSaltLen   = 8
	maxSaltLen   = 64
	minKeyLen    = 16
	maxKeyLen    = 64
)

// phc is a parsed argon2id PHC string.
type phc struct {
	params argonParams
	salt   []byte
	key    []byte
}

var b64 = base64.RawStdEncoding

// String renders $argon2id$v=19$m=M,t=T,p=P$salt$hash.
func (h phc) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.memory, h.params.time, h.params.threads, b64.EncodeToString(h.salt), b64.EncodeToString(h.key))
}

// parsePHC reads $argon2id$v=19$m=M,t=T,p=P$salt$hash and checks every field against the caps.
// Its errors never quote the input.
func parsePHC(s string) (phc, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" {
		return phc{}, errors.New("not a PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash)")
	}
	if parts[1] != "argon2id" {
		return phc{}, errors.New("algorithm must be argon2id")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return phc{}, fmt.Errorf("version must be v=%d", argon2.Version)
	}
	var p argonParams
	var err error
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return phc{}, errors.New("parameters must be m=...,t=...,p=...")
	}
	if p.memory, err = phcParam(params[0], "m", maxMemoryKiB); err != nil {
		return phc{}, err
	}
	if p.time, err = phcParam(params[1], "t", maxTime); err != nil {
		return phc{}, err
	}
	threads, err := phcParam(params[2], "p", maxThreads)
	if err != nil {
		return phc{}, err
	}
	p.threads = uint8(threads)
	if p.memory < 8*uint32(p.threads) {
		return phc{}, fmt.Errorf("m must be at least 8 KiB per lane (p=%d)", p.threads)
	}
	salt, err := b64.Strict().DecodeString(parts[4])
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return phc{}, fmt.Errorf("salt must be unpadded base64 of %d to %d bytes", minSaltLen, maxSaltLen)
	}
	key, err := b64.Strict().DecodeString(parts[5])
	if err != nil || len(key) < minKeyLen || len(key) > maxKeyLen {
		return phc{}, fmt.Errorf("hash must be unpadded base64 of %d to %d bytes", minKeyLen, maxKeyLen)
	}
	p.saltLen, p.keyLen = len(salt), len(key)
	return phc{params: p, salt: salt, key: key}, nil
}

// phcParam parses "name=value" with 1 <= value <= limit.
func phcParam(field, name string, limit uint32) (uint32, error) {
	v, ok := strings.CutPrefix(field, name+"=")
	if !ok {
		return 0, fmt.Errorf("parameters must be m=...,t=...,p=... in that order")
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n < 1 || n > uint64(limit) {
		return 0, fmt.Errorf("parameter %s must be an integer from 1 to %d", name, limit)
	}
	return uint32(n), nil
}

// hashWithParams hashes secret under a fresh random salt.
func hashWithParams(secret string, p argonParams) (phc, error) {
	if secret == "" {
		return phc{}, errors.New("hash secret: the secret is empty")
	}
	salt := make([]byte, p.saltLen)
	if _, err := rand.Read(salt); err != nil {
		return phc{}, fmt.Errorf("hash secret: %w", err)
	}
	key := argon2.IDKey([]byte(secret), salt, p.time, p.memory, p.threads, uint32(p.keyLen))
	return phc{params: p, salt: salt, key: key}, nil
}

// matches recomputes the hash with the parameters and salt stored in h and compares in constant
// time.
func (h phc) matches(secret string) bool {
	p := h.params
	got := argon2.IDKey([]byte(secret), h.salt, p.time, p.memory, p.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// HashSecret hashes a client secret with argon2id (m=64 MiB, t=2, p=1, 16-byte salt, 32-byte
// hash) and returns the PHC string $argon2id$v=19$m=65536,t=2,p=1$salt$hash.
func HashSecret(secret string) (string, error) {
	h, err := hashWithParams(secret, defaultParams)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// VerifySecret reports whether secret matches the PHC string, computed with the parameters the
// string carries. The error is for a malformed string or parameters beyond the caps
// (m <= 256 MiB, t <= 8, p <= 16), never for a mismatch.
func VerifySecret(phcString, secret string) (bool, error) {
	h, err := parsePHC(phcString)
	if err != nil {
		return false, fmt.Errorf("verify secret: %w", err)
	}
	return h.matches(secret), nil
}
