package token

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// hashKind is the algorithm of a stored secret hash.
type hashKind uint8

const (
	// kindArgon2id is the password hash (RFC 9106), for every secret a person may have chosen.
	kindArgon2id hashKind = iota
	// kindSHA256 is one salted SHA-256, for secrets GenerateSecret made: 256 random bits need
	// no stretching (a guess is as hopeless at 1 µs as at 100 ms), and a check costs a
	// microsecond instead of 100 ms of CPU and 64 MiB, so a flood of logins cannot starve
	// other work.
	kindSHA256
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

// demoParams are deliberately cheap: the dev-mode demo secret is public anyway. It stays
// argon2id (not the fast hash) because it is a short, guessable secret, and the rule is simple:
// only secrets GenerateSecret made get the fast hash.
var demoParams = argonParams{memory: 64, time: 1, threads: 1, saltLen: 16, keyLen: 32}

// demoHash is the demo secret's hash under a fixed salt (the secret is public anyway), so that
// every dev replica and every restart has the same hash fingerprint and accepts the others'
// demo tokens.
func demoHash() phc {
	salt := sha256.Sum256([]byte("yardstick dev-mode demo client"))
	p := demoParams
	key := argon2.IDKey([]byte(DevClientSecret), salt[:p.saltLen], p.time, p.memory, p.threads, uint32(p.keyLen))
	return phc{params: p, salt: salt[:p.saltLen], key: key}
}

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
	sha256Len    = sha256.Size
	fastSaltLen  = 16
)

// phc is a parsed secret hash in PHC form: argon2id or sha256.
type phc struct {
	kind   hashKind
	params argonParams // argon2id only
	salt   []byte
	key    []byte
}

var b64 = base64.RawStdEncoding

// String renders $argon2id$v=19$m=M,t=T,p=P$salt$hash or $sha256$salt$hash.
func (h phc) String() string {
	if h.kind == kindSHA256 {
		return fmt.Sprintf("$sha256$%s$%s", b64.EncodeToString(h.salt), b64.EncodeToString(h.key))
	}
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.memory, h.params.time, h.params.threads, b64.EncodeToString(h.salt), b64.EncodeToString(h.key))
}

// slow reports whether checking a secret against h is costly (argon2id), and so must hold one of
// the issuer's hashing slots.
func (h phc) slow() bool { return h.kind == kindArgon2id }

const notPHC = "not a PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash or $sha256$salt$hash)"

// parsePHC reads $argon2id$v=19$m=M,t=T,p=P$salt$hash or $sha256$salt$hash and checks every
// field against the caps. Its errors never quote the input.
func parsePHC(s string) (phc, error) {
	parts := strings.Split(s, "$")
	if len(parts) < 2 || parts[0] != "" {
		return phc{}, errors.New(notPHC)
	}
	switch {
	case parts[1] == "sha256" && len(parts) == 4:
		return parseSHA256(parts[2], parts[3])
	case parts[1] == "argon2id" && len(parts) == 6:
		return parseArgon2id(parts[2:])
	case parts[1] != "sha256" && parts[1] != "argon2id" && (len(parts) == 4 || len(parts) == 6):
		return phc{}, errors.New("algorithm must be argon2id or sha256")
	}
	return phc{}, errors.New(notPHC)
}

func parseSHA256(salt64, key64 string) (phc, error) {
	salt, err := b64.Strict().DecodeString(salt64)
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return phc{}, fmt.Errorf("salt must be unpadded base64 of %d to %d bytes", minSaltLen, maxSaltLen)
	}
	key, err := b64.Strict().DecodeString(key64)
	if err != nil || len(key) != sha256Len {
		return phc{}, fmt.Errorf("sha256 hash must be unpadded base64 of %d bytes", sha256Len)
	}
	return phc{kind: kindSHA256, salt: salt, key: key}, nil
}

// parseArgon2id reads v=19, m=M,t=T,p=P, salt and hash.
func parseArgon2id(parts []string) (phc, error) {
	if parts[0] != "v="+strconv.Itoa(argon2.Version) {
		return phc{}, fmt.Errorf("version must be v=%d", argon2.Version)
	}
	var p argonParams
	var err error
	params := strings.Split(parts[1], ",")
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
	salt, err := b64.Strict().DecodeString(parts[2])
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return phc{}, fmt.Errorf("salt must be unpadded base64 of %d to %d bytes", minSaltLen, maxSaltLen)
	}
	key, err := b64.Strict().DecodeString(parts[3])
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

func newSalt(n int) ([]byte, error) {
	salt := make([]byte, n)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("hash secret: %w", err)
	}
	return salt, nil
}

// hashWithParams hashes secret with argon2id under a fresh random salt.
func hashWithParams(secret string, p argonParams) (phc, error) {
	if secret == "" {
		return phc{}, errors.New("hash secret: the secret is empty")
	}
	salt, err := newSalt(p.saltLen)
	if err != nil {
		return phc{}, err
	}
	key := argon2.IDKey([]byte(secret), salt, p.time, p.memory, p.threads, uint32(p.keyLen))
	return phc{params: p, salt: salt, key: key}, nil
}

// hashFast hashes secret with salted SHA-256; only for secrets of at least 128 random bits.
func hashFast(secret string) (phc, error) {
	salt, err := newSalt(fastSaltLen)
	if err != nil {
		return phc{}, err
	}
	return phc{kind: kindSHA256, salt: salt, key: sha256Of(salt, secret)}, nil
}

// dummyHash is a fast hash of no secret: random salt and random digest, which no secret matches
// (but with a chance of 2^-256).
func dummyHash() (phc, error) {
	salt, err := newSalt(fastSaltLen)
	if err != nil {
		return phc{}, err
	}
	key, err := newSalt(sha256Len)
	if err != nil {
		return phc{}, err
	}
	return phc{kind: kindSHA256, salt: salt, key: key}, nil
}

// sha256Of is SHA-256(salt || secret).
func sha256Of(salt []byte, secret string) []byte {
	d := sha256.New()
	d.Write(salt)
	d.Write([]byte(secret))
	return d.Sum(nil)
}

// matches recomputes the hash with the algorithm, parameters and salt stored in h and compares
// in constant time.
func (h phc) matches(secret string) bool {
	var got []byte
	if h.kind == kindSHA256 {
		got = sha256Of(h.salt, secret)
	} else {
		p := h.params
		got = argon2.IDKey([]byte(secret), h.salt, p.time, p.memory, p.threads, uint32(len(h.key)))
	}
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// HashSecret hashes a client secret with argon2id (m=64 MiB, t=2, p=1, 16-byte salt, 32-byte
// hash) and returns the PHC string $argon2id$v=19$m=65536,t=2,p=1$salt$hash. Use it for any
// secret that GenerateSecret did not make.
func HashSecret(secret string) (string, error) {
	h, err := hashWithParams(secret, defaultParams)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// VerifySecret reports whether secret matches the PHC string, computed with the algorithm and
// parameters the string carries. The error is for a malformed string or parameters beyond the
// caps (m <= 256 MiB, t <= 8, p <= 16), never for a mismatch.
func VerifySecret(phcString, secret string) (bool, error) {
	h, err := parsePHC(phcString)
	if err != nil {
		return false, fmt.Errorf("verify secret: %w", err)
	}
	return h.matches(secret), nil
}
